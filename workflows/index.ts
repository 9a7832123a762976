export * from './account-onboarding';
export * from './connection-provisioning';
export * from './lifecycle';
export * from './network-service-config-provisioning';
export * from './network-service-provisioning';
export * from './network-feature-config-provisioning';
export * from './traffic-statistics';
export * from './fabric-supervision';

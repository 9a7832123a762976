export * from './account-onboarding';
export * from './connection-provisioning';

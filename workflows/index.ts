export * from './account-onboarding';

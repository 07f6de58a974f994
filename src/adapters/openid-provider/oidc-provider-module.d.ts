// oidc-provider ships no types; oidc-provider-library.ts describes the parts in use.
declare module 'oidc-provider';

/** See oidc-provider-pages.mjs. */
export function walkProviderPages(
  issuer: string,
  authorizationUrl: string,
  account: string,
  options?: { cancel?: boolean; jar?: Map<string, string> },
): Promise<string>;

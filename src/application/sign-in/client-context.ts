/** What the HTTP layer knows about the caller, passed into use cases. */
export interface ClientContext {
  ip: string;
  userAgent: string | null;
  acceptLanguage: string | null;
  /** The raw `deviceFingerprint` (body field or X-Device-Fingerprint header). */
  fingerprint: string | null;
}

/** Renders text as a QR code image for authenticator apps to scan. */
export abstract class QrCodeRenderer {
  /** A PNG data URL (`data:image/png;base64,…`). */
  abstract pngDataUrl(text: string): Promise<string>;
}

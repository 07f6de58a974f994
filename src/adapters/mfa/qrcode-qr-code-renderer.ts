import { Injectable } from '@nestjs/common';
import { QrCodeRenderer } from '../../application/ports/qr-code-renderer';

/** qrcode and its PNG encoder are loaded on the first enrolment, not by every instance at start. */
let library: Promise<typeof import('qrcode')> | null = null;

@Injectable()
export class QrcodeQrCodeRenderer implements QrCodeRenderer {
  async pngDataUrl(text: string): Promise<string> {
    library ??= import('qrcode');
    const QRCode = await library;
    return QRCode.toDataURL(text, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2, width: 256 });
  }
}

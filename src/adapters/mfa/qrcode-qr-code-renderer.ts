import { Injectable } from '@nestjs/common';
import QRCode from 'qrcode';
import { QrCodeRenderer } from '../../application/ports/qr-code-renderer';

@Injectable()
export class QrcodeQrCodeRenderer implements QrCodeRenderer {
  pngDataUrl(text: string): Promise<string> {
    return QRCode.toDataURL(text, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2, width: 256 });
  }
}

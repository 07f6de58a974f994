import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import speakeasy from 'speakeasy';
import { TotpVerifier } from '../../application/ports/totp-verifier';

const STEP_SECONDS = 30;
const DIGITS = 6;
/** One step of clock drift either side of the current one (RFC 6238 §5.2). */
const WINDOW = 1;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding (what authenticator apps and oathtool read). */
export function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/**
 * TOTP on speakeasy. speakeasy's own secret generator maps bytes to characters with a bias, so
 * secrets are made here from 20 CSPRNG bytes; `encoding: 'base32'` is always passed (its
 * default, ascii, would make every check fail silently).
 */
@Injectable()
export class SpeakeasyTotpVerifier implements TotpVerifier {
  generateSecret(): string {
    return base32(randomBytes(20));
  }

  keyUri({ secret, issuer, account }: { secret: string; issuer: string; account: string }): string {
    const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
    const query = new URLSearchParams({ secret, issuer, algorithm: 'SHA1', digits: String(DIGITS), period: String(STEP_SECONDS) });
    return `otpauth://totp/${label}?${query.toString().replace(/\+/g, '%20')}`;
  }

  matchingStep(secret: string, code: string, now: Date): number | null {
    // speakeasy parses the code with parseInt, which would take "12345x" for "012345".
    if (!/^\d{6}$/.test(code)) return null;
    const time = Math.floor(now.getTime() / 1000);
    const match = speakeasy.totp.verifyDelta({
      secret,
      encoding: 'base32',
      token: code,
      window: WINDOW,
      step: STEP_SECONDS,
      digits: DIGITS,
      time,
    });
    if (!match) return null;
    return Math.floor(time / STEP_SECONDS) + match.delta;
  }
}

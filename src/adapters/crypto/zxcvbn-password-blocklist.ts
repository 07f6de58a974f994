import { Injectable } from '@nestjs/common';
import { dictionary } from '@zxcvbn-ts/language-common';
import { PasswordBlocklist } from '../../application/ports/password-blocklist';

/**
 * The common-password list maintained by zxcvbn-ts (about 49,000 leaked passwords, most
 * common first), plus the same words with the digits people append most often stripped.
 */
@Injectable()
export class ZxcvbnPasswordBlocklist implements PasswordBlocklist {
  private readonly words: ReadonlySet<string> = new Set((dictionary['passwords-common'] as string[]).map((w) => w.toLowerCase()));

  isCommon(candidate: string): boolean {
    if (this.words.has(candidate)) return true;
    // "password1234", "qwertyuiop123": a listed word followed only by digits or punctuation.
    const stem = candidate.replace(/[\d\W_]+$/u, '');
    return stem.length >= 4 && stem !== candidate && this.words.has(stem) && /^[\d\W_]*$/u.test(candidate.slice(stem.length));
  }

  get size(): number {
    return this.words.size;
  }
}

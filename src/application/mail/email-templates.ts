import { OutgoingEmail } from '../ports/mailer';

interface TemplateInput {
  realmId: string;
  realmName: string;
  to: string;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

function message(input: TemplateInput, subject: string, lines: string[], link?: { url: string; label: string }): OutgoingEmail {
  const text = [...lines, ...(link ? ['', link.url] : []), '', `— ${input.realmName}`].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    ...lines.map((line) => `<p>${escapeHtml(line)}</p>`),
    link ? `<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p>` : '',
    `<p>— ${escapeHtml(input.realmName)}</p>`,
    '</body></html>',
  ].join('');
  // Subjects never carry user input, so no header can be injected through them.
  return { realmId: input.realmId, to: input.to, subject: `${subject} — ${input.realmName}`.replace(/[\r\n]+/g, ' '), text, html };
}

/**
 * A link to a page that takes a token, e.g. `/verify-email?token=…`. Outside the default realm the
 * realm rides along (`&realm=…`), so that the page (the account console, or any frontend) knows it.
 */
function tokenLink(input: TemplateInput & { publicUrl: string; token: string }, path: string): string {
  const realm = input.realmId === 'default' ? '' : `&realm=${encodeURIComponent(input.realmId)}`;
  return `${input.publicUrl}${path}?token=${encodeURIComponent(input.token)}${realm}`;
}

/** Messages of the email rules. Links are built from PUBLIC_URL, never from request headers. */
export const EmailTemplates = {
  verification(input: TemplateInput & { publicUrl: string; token: string }): OutgoingEmail {
    const url = tokenLink(input, '/verify-email');
    return message(
      input,
      'Verify your email address',
      ['Please confirm your email address by opening the link below. The link is valid for 24 hours and works once.'],
      { url, label: 'Verify email address' },
    );
  },

  passwordReset(input: TemplateInput & { publicUrl: string; token: string }): OutgoingEmail {
    const url = tokenLink(input, '/reset-password');
    return message(
      input,
      'Reset your password',
      [
        'Someone asked to reset the password of your account. If it was you, open the link below within an hour. If not, ignore this message.',
      ],
      { url, label: 'Reset password' },
    );
  },

  invitation(input: TemplateInput & { publicUrl: string; token: string }): OutgoingEmail {
    const url = tokenLink(input, '/reset-password');
    return message(
      input,
      'Your new account',
      ['An administrator created an account for you. Open the link below to choose your password; it is valid for an hour.'],
      { url, label: 'Choose a password' },
    );
  },

  /** An invitation to an organization; the page it opens asks before it accepts. */
  organizationInvitation(input: TemplateInput & { publicUrl: string; token: string; organizationName: string }): OutgoingEmail {
    const url = tokenLink(input, '/account/invitation');
    return message(
      input,
      'You are invited to join an organization',
      [
        `You are invited to join ${input.organizationName}. Open the link below and sign in with this address to accept; the link is valid for 7 days and works once.`,
        'If you did not expect this invitation, ignore this message.',
      ],
      { url, label: 'Review the invitation' },
    );
  },

  passwordChanged(input: TemplateInput): OutgoingEmail {
    return message(input, 'Your password was changed', [
      'The password of your account was just changed. If you did not do this, reset your password at once and contact your administrator.',
    ]);
  },

  /**
   * A sign-in code, and with it a link when the browser that asked gave a page to come back to.
   * The link names no realm: the page that asked knows its own.
   */
  signInCode(input: TemplateInput & { code: string; minutes: number; link: string | null }): OutgoingEmail {
    const formatted = `${input.code.slice(0, 4)} ${input.code.slice(4)}`;
    return message(
      input,
      'Your sign-in code',
      [
        `Your sign-in code is ${formatted}. It is valid for ${input.minutes} minutes and works once.`,
        ...(input.link ? ['Or open the link below in the browser where you asked for it.'] : []),
        'If you did not ask to sign in, ignore this message: nobody can sign in without the code.',
      ],
      input.link ? { url: input.link, label: 'Sign in' } : undefined,
    );
  },

  /** A change to the account's security; `manageUrl`, when given, opens the page where the owner reviews it. */
  securityNotice(input: TemplateInput & { what: string; manageUrl?: string | null }): OutgoingEmail {
    return message(
      input,
      'Security notice',
      [input.what, 'If this was not you, change your password and review your sessions and sign-in methods.'],
      input.manageUrl ? { url: input.manageUrl, label: 'Review your account’s security' } : undefined,
    );
  },
};

/**
 * The pages of the realms' OpenID providers: sign-in, second factor, consent and errors. Plain
 * HTML forms that work without JavaScript (fields named email, password and code), no inline script or
 * style, so they render under the console's Content-Security-Policy.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

function alert(message: string | null): string {
  return message ? `<p role="alert">${escapeHtml(message)}</p>\n` : '';
}

export interface FormTarget {
  /** Where the form posts. */
  action: string;
  /** The form's own CSRF token. */
  csrf: string;
}

export interface PageContext {
  realmName: string;
  clientName: string;
}

export function signInPage(
  context: PageContext,
  form: FormTarget,
  options: {
    email?: string;
    error?: string | null;
    emailCode?: FormTarget;
    providers?: { form: FormTarget; list: { alias: string; displayName: string }[] };
  } = {},
): string {
  const providers = options.providers?.list.length
    ? `
<h2>Or sign in with</h2>
<form method="post" action="${escapeHtml(options.providers.form.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(options.providers.form.csrf)}">
${options.providers.list.map((p) => `<p><button type="submit" name="alias" value="${escapeHtml(p.alias)}">${escapeHtml(p.displayName)}</button></p>`).join('\n')}
</form>`
    : '';
  const emailCode = options.emailCode
    ? `
<h2>Or sign in with a code sent by email</h2>
<form method="post" action="${escapeHtml(options.emailCode.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(options.emailCode.csrf)}">
<p><label for="code-email">Email</label>
<input id="code-email" name="email" type="email" autocomplete="username" required value="${escapeHtml(options.email ?? '')}"></p>
<p><button type="submit">Email me a code</button></p>
</form>`
    : '';
  return page(
    `Sign in – ${context.realmName}`,
    `<h1>Sign in to continue to ${escapeHtml(context.clientName)}</h1>
${alert(options.error ?? null)}<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrf)}">
<p><label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(options.email ?? '')}"></p>
<p><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required></p>
<p><button type="submit">Sign in</button></p>
</form>${emailCode}${providers}`,
  );
}

/**
 * After "Email me a code": the same page whether or not the address has an account (or got an
 * email). The code is typed in (`code`); "Use another way" goes back to the sign-in page.
 */
export function emailCodePage(
  context: PageContext,
  forms: { verify: FormTarget; restart: FormTarget },
  options: { email: string; error?: string | null },
): string {
  return page(
    `Enter your code – ${context.realmName}`,
    `<h1>Enter the code we emailed you</h1>
<p>If ${escapeHtml(options.email)} can sign in here, a sign-in code is on its way to it. It is valid for 10 minutes.</p>
${alert(options.error ?? null)}<form method="post" action="${escapeHtml(forms.verify.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(forms.verify.csrf)}">
<p><label for="code">Code</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required></p>
<p><button type="submit">Sign in</button></p>
</form>
<form method="post" action="${escapeHtml(forms.restart.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(forms.restart.csrf)}">
<p><button type="submit">Use another way</button></p>
</form>`,
  );
}

export function secondFactorPage(context: PageContext, form: FormTarget, options: { error?: string | null } = {}): string {
  return page(
    `Second step – ${context.realmName}`,
    `<h1>Enter the code from your authenticator app</h1>
${alert(options.error ?? null)}<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrf)}">
<p><label for="code">Code (or a recovery code)</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required></p>
<p><button type="submit">Continue</button></p>
</form>`,
  );
}

const SCOPE_TEXT: Record<string, string> = {
  openid: 'Know who you are',
  profile: 'See your name and picture',
  email: 'See your email address',
  roles: 'See your roles',
  offline_access: 'Stay signed in when you are away',
};

export function consentPage(context: PageContext, form: FormTarget, scopes: string[], resources: Record<string, string[]>): string {
  const items = scopes.map((scope) => `<li>${escapeHtml(SCOPE_TEXT[scope] ?? scope)}</li>`);
  for (const [resource, list] of Object.entries(resources)) {
    for (const scope of list) items.push(`<li>${escapeHtml(scope)} at ${escapeHtml(resource)}</li>`);
  }
  return page(
    `Allow access – ${context.realmName}`,
    `<h1>${escapeHtml(context.clientName)} asks to</h1>
<ul>
${items.join('\n')}
</ul>
<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrf)}">
<p><button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></p>
</form>`,
  );
}

/**
 * The device page (RFC 8628's verification URI): the code a TV or a command-line tool shows,
 * typed in with or without its dash, in any case (`code`; the provider reads it as `user_code`).
 */
export function deviceCodePage(
  realmName: string,
  form: { action: string; xsrf: string },
  options: { error?: string | null; code?: string } = {},
): string {
  return page(
    `Connect a device – ${realmName}`,
    `<h1>Connect a device</h1>
<p>Enter the code your device shows.</p>
${alert(options.error ?? null)}<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="xsrf" value="${escapeHtml(form.xsrf)}">
<p><label for="code">Code</label>
<input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="16" placeholder="XXXX-XXXX" required value="${escapeHtml(options.code ?? '')}"></p>
<p><button type="submit">Continue</button></p>
</form>`,
  );
}

/** The device's code was found: the user confirms that this is the device they are connecting. */
export function deviceConfirmPage(realmName: string, clientName: string, form: { action: string; xsrf: string; code: string }): string {
  const hidden = `<input type="hidden" name="xsrf" value="${escapeHtml(form.xsrf)}">
<input type="hidden" name="code" value="${escapeHtml(form.code)}">`;
  return page(
    `Connect a device – ${realmName}`,
    `<h1>Connect ${escapeHtml(clientName)}?</h1>
<p>Continue only if your device shows the code <strong>${escapeHtml(form.code)}</strong>.</p>
<form method="post" action="${escapeHtml(form.action)}">
${hidden}
<p><button type="submit" name="confirm" value="yes">Continue</button>
<button type="submit" name="abort" value="yes">Cancel</button></p>
</form>`,
  );
}

/** The device is connected (or refused): the user goes back to it. */
export function deviceDonePage(realmName: string): string {
  return page(
    `Device connected – ${realmName}`,
    `<h1>Your device is connected</h1>\n<p>You can go back to your device and close this page.</p>`,
  );
}

/** The script that submits the logout form at once, when the app's ID token names this very session. */
export const LOGOUT_AUTO_SUBMIT = 'document.forms[0].submit();';

/**
 * RP-initiated logout: the user confirms ending the session (or stays signed in). `automatic`:
 * the app's ID token named this session, so the form carries `logout=yes` and submits itself
 * (a button does it without JavaScript).
 */
export function logoutPage(
  context: { realmName: string; clientName: string | null },
  form: { action: string; xsrf: string },
  automatic: boolean,
): string {
  const from = context.clientName ? ` (asked by ${escapeHtml(context.clientName)})` : '';
  const hidden = `<input type="hidden" name="xsrf" value="${escapeHtml(form.xsrf)}">`;
  if (automatic) {
    return page(
      `Signing out – ${context.realmName}`,
      `<h1>Signing you out${from}</h1>
<form method="post" action="${escapeHtml(form.action)}">
${hidden}
<input type="hidden" name="logout" value="yes">
<p><button type="submit">Continue</button></p>
</form>
<script>${LOGOUT_AUTO_SUBMIT}</script>`,
    );
  }
  return page(
    `Sign out – ${context.realmName}`,
    `<h1>Sign out of ${escapeHtml(context.realmName)}?</h1>
<p>You will be signed out of every app that uses this sign-in${from}.</p>
<form method="post" action="${escapeHtml(form.action)}">
${hidden}
<p><button type="submit" name="logout" value="yes">Sign out</button>
<button type="submit">Stay signed in</button></p>
</form>`,
  );
}

/** After a logout with no address to return to. */
export function signedOutPage(realmName: string): string {
  return page(`Signed out – ${realmName}`, `<h1>You are signed out</h1>\n<p>You can close this page.</p>`);
}

export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}

/** The provider's error page: what went wrong, never a redirect (an unknown client or redirect URI). */
export function renderProviderError(out: Record<string, string>): string {
  const rows = Object.entries(out)
    .map(([key, value]) => `<dt>${escapeHtml(key)}</dt><dd>${escapeHtml(value)}</dd>`)
    .join('\n');
  return page('Sign-in error', `<h1>This sign-in request cannot be completed</h1>\n<dl>\n${rows}\n</dl>`);
}

// Signed in: profile and email status, sessions, security (password, passkeys, linked accounts at
// identity providers, TOTP, security keys, recovery codes).
import { IdentityError, type IdentityProvider, type LinkedIdentity, type MfaStatus, type Session, type User } from '../../client/src/index';
import type { App, View } from './app';
import { action, type Child, field, form, h, hidden, liveRegion, loading, row, time, title } from './dom';
import { PASSWORD_HINT, Problem } from './messages';

const badge = (text: string, kind: string) => h('span', { class: `badge ${kind}` }, text);

/**
 * The name and picture form. The picture is an https address shown as a link, not an image: the
 * console's CSP keeps every image on its own origin.
 */
function profileForm(app: App, profile: { firstName: string; lastName: string; avatar: string | null }, saved: () => void) {
  const first = field('First name', 'firstName', { autocomplete: 'given-name', maxlength: 100, value: profile.firstName });
  const last = field('Last name', 'lastName', { autocomplete: 'family-name', maxlength: 100, value: profile.lastName });
  const avatar = field(
    'Picture address',
    'avatar',
    { type: 'url', inputmode: 'url', autocomplete: 'photo', maxlength: 2048, value: profile.avatar ?? '' },
    'An https:// address of an image; leave it empty for none.',
  );
  return form({
    label: 'Your name and picture',
    fields: [first, last, avatar],
    submit: 'Save',
    onSubmit: async (values) => {
      await app.client.updateProfile({ firstName: values.firstName, lastName: values.lastName, avatar: values.avatar || null });
      app.notify('Your profile was saved.');
      saved();
    },
  });
}

export function profileView(app: App): View {
  const body = h('div');
  const content = h('section', {}, title('Your profile'), body);
  const render = async (): Promise<Child[]> => {
    const user = await app.client.me();
    const name = `${user.profile.firstName} ${user.profile.lastName}`.trim();
    const alert = liveRegion('error');
    const picture = user.profile.avatar;
    return [
      h(
        'dl',
        { class: 'facts' },
        row('Name', name || '—'),
        row('Picture', picture ? h('a', { href: picture, rel: 'noopener noreferrer', target: '_blank' }, 'Open your picture') : 'None'),
        // The badge stays beside the address, however narrow the window.
        row(
          'Email address',
          h(
            'span',
            { class: 'address' },
            h('span', {}, user.email),
            user.emailVerified ? badge('Verified', 'ok') : badge('Not verified', 'warn'),
          ),
        ),
        row(
          'Two-step verification',
          user.mfa.enabled
            ? `On (${user.mfa.methods.map((m) => (m === 'totp' ? 'authenticator app' : 'security key or passkey')).join(', ')})`
            : 'Off',
          ' ',
          h('a', { href: app.href('#security') }, 'Manage'),
        ),
        row('Member since', time(user.createdAt)),
        row('Last sign-in', time(user.lastLoginAt)),
      ),
      !user.emailVerified &&
        h(
          'div',
          { class: 'panel' },
          h('h2', {}, 'Confirm your email address'),
          h('p', {}, `Open the link we sent to ${user.email}. No email? We can send a new link.`),
          alert,
          action(
            'Send the link again',
            async () => {
              await app.client.resendVerification(user.email);
              app.notify(`A new link is on its way to ${user.email}.`);
            },
            alert,
          ),
        ),
      h(
        'details',
        { class: 'panel' },
        h('summary', {}, 'Change your name or picture'),
        profileForm(app, user.profile, () => void loading(body, render)),
      ),
    ];
  };
  void loading(body, render);
  void passkeyOffer(app).then((offer) => offer && content.append(offer));
  return { title: 'Your profile', content };
}

/**
 * New recovery codes, shown once until the user says they are saved (then `saved` runs): they
 * can be copied and downloaded. The caller puts the panel on screen and focuses its heading.
 */
function recoveryCodesPanel(app: App, codes: string[], why: string, saved: () => void): HTMLElement {
  const heading = h('h2', { tabindex: -1 }, 'Save your recovery codes');
  const alert = liveRegion('error');
  const list = h(
    'ol',
    { class: 'codes', 'aria-label': 'Recovery codes' },
    codes.map((c) => h('li', {}, h('code', {}, c))),
  );
  const text = `Recovery codes (${app.realm})\n\n${codes.join('\n')}\n\nEach code signs you in once.\n`;
  return h(
    'section',
    { class: 'panel codes-panel', 'data-section': 'codes' },
    heading,
    h('p', {}, why),
    h(
      'p',
      {},
      'Each code signs you in once when your authenticator app or security key is not at hand. They are shown only now: keep them somewhere safe, like a password manager.',
    ),
    alert,
    list,
    h(
      'div',
      { class: 'actions' },
      action(
        'Copy codes',
        async () => {
          try {
            await navigator.clipboard.writeText(text);
            app.notify(`Copied ${codes.length} recovery codes.`);
          } catch {
            getSelection()?.selectAllChildren(list);
            app.notify('Copying is not allowed here: the codes are selected, press Ctrl+C (or Cmd+C).');
          }
        },
        alert,
      ),
      action(
        'Download codes',
        async () => {
          const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
          const link = h('a', { href: url, download: `recovery-codes-${app.realm}.txt` });
          link.click();
          setTimeout(() => URL.revokeObjectURL(url), 1000);
          app.notify('Downloaded the recovery codes.');
        },
        alert,
      ),
      h('button', { type: 'button', class: 'primary', onclick: saved }, 'I have saved them'),
    ),
  );
}

const OFFER_DISMISSED = 'identity:passkey-offer-dismissed';

/**
 * After a password sign-in on a device that can make passkeys (a platform authenticator with user
 * verification), and while the account has none: an offer to create one. "Not now" is remembered.
 */
async function passkeyOffer(app: App): Promise<HTMLElement | null> {
  const snapshot = app.client.getSnapshot();
  if (snapshot.status !== 'signed-in' || !snapshot.amr.includes('pwd') || localStorage.getItem(OFFER_DISMISSED)) return null;
  const capable = await globalThis.PublicKeyCredential?.isUserVerifyingPlatformAuthenticatorAvailable?.().catch(() => false);
  if (!capable) return null;
  const status = await app.client.mfa.status().catch(() => null);
  if (!status || status.webauthnCredentials.some((c) => c.passkey)) return null;
  const alert = liveRegion('error');
  const panel: HTMLElement = h(
    'section',
    { class: 'panel offer', 'aria-labelledby': 'passkey-offer' },
    h('h2', { id: 'passkey-offer', tabindex: -1 }, 'Sign in faster with a passkey'),
    h('p', {}, 'This device can keep a passkey: next time, sign in with your fingerprint, face or device PIN instead of your password.'),
    alert,
    h(
      'div',
      { class: 'actions' },
      action(
        'Create a passkey',
        async () => {
          const result = await app.client.passkeys.register();
          app.notify(`Created the passkey “${result.credential.name}”. It signs you in on this device.`);
          if (!result.recoveryCodes) {
            panel.remove();
            return;
          }
          // The account's first second factor: the recovery codes that come with it, shown once in its place.
          const codes = recoveryCodesPanel(app, result.recoveryCodes, 'Your passkey is created.', () => codes.remove());
          panel.replaceWith(codes);
          codes.querySelector<HTMLElement>('h2')?.focus();
        },
        alert,
        { class: 'primary' },
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: () => {
            localStorage.setItem(OFFER_DISMISSED, '1');
            panel.remove();
          },
        },
        'Not now',
      ),
    ),
  );
  return panel;
}

const flagReason = (session: Session) =>
  session.flag?.reason === 'fingerprint_mismatch'
    ? 'the device no longer looked like the one that signed in'
    : (session.flag?.reason ?? '');

function place(session: Session): string {
  const where = [session.location.city, session.location.country].filter(Boolean).join(', ');
  return where || 'Unknown place';
}

export function sessionsView(app: App): View {
  const body = h('div');
  const content = h(
    'section',
    {},
    title('Where you are signed in'),
    h('p', { class: 'muted' }, 'Sign out any session you do not recognise, then change your password.'),
    body,
  );
  const reload = () => void loading(body, render);
  const render = async (): Promise<Child[]> => {
    const sessions = (await app.client.sessions.list()).sort(
      (a, b) => Number(b.current) - Number(a.current) || b.lastActiveAt.localeCompare(a.lastActiveAt),
    );
    const alert = liveRegion('error');
    const others = sessions.filter((s) => !s.current).length;
    const signOutButton = (session: Session) => {
      const button = action(
        'Sign out',
        async () => {
          await app.client.sessions.revoke(session.id);
          app.notify(`Signed out ${session.device.name || 'the session'}.`);
          reload();
        },
        alert,
        { class: 'secondary' },
      );
      // Screen readers hear which session the button ends.
      button.append(hidden(` ${session.device.name || 'session'}, last active ${new Date(session.lastActiveAt).toLocaleString()}`));
      return button;
    };
    return [
      alert,
      h(
        'ul',
        { class: 'sessions', 'aria-label': 'Sessions' },
        sessions.map((session) =>
          h(
            'li',
            { class: `session${session.status === 'flagged' ? ' flagged' : ''}` },
            h(
              'h2',
              {},
              session.device.name || 'Unknown device',
              session.current && badge('This device', 'ok'),
              session.status === 'flagged' && badge('Flagged', 'warn'),
            ),
            session.status === 'flagged' &&
              h('p', { class: 'warning' }, 'Flagged ', time(session.flag?.flaggedAt ?? null, true), ': ', flagReason(session), '.'),
            h(
              'dl',
              { class: 'facts compact' },
              row('Place', place(session)),
              row('IP address', session.ip),
              row('Last active', time(session.lastActiveAt, true)),
              row('Signed in', time(session.createdAt)),
            ),
            !session.current && signOutButton(session),
          ),
        ),
      ),
      others > 0 &&
        action(
          'Sign out all other sessions',
          async () => {
            const count = await app.client.sessions.revokeOthers();
            app.notify(`Signed out ${count} other session${count === 1 ? '' : 's'}.`);
            reload();
          },
          alert,
          { class: 'danger' },
        ),
    ];
  };
  reload();
  return { title: 'Sessions', content };
}

const passwordField = (label = 'Your password', name = 'password') =>
  field(label, name, { type: 'password', autocomplete: 'current-password', required: true });

/** What confirms a removal: the password, or for an account without one, a recent sign-in (no field). */
const confirmation = (hasPassword: boolean) => (hasPassword ? [passwordField()] : []);
const RECENT_SIGN_IN = h('p', { class: 'muted' }, 'Without a password, this needs a sign-in within the last 10 minutes.');

export function securityView(app: App): View {
  const body = h('div', { class: 'stack' });
  const content = h('section', {}, title('Security'), body);
  /** Rebuilds the view; the focus goes to the heading of the section named by `focus`. */
  const reload = (focus?: string) => {
    void loading(body, render).then(() => {
      if (focus) body.querySelector<HTMLElement>(`[data-section="${focus}"] h2`)?.focus();
    });
  };
  const section = (key: string, heading: string, ...children: Child[]) =>
    h(
      'section',
      { class: 'panel', 'data-section': key, 'aria-labelledby': `section-${key}` },
      h('h2', { id: `section-${key}`, tabindex: -1 }, heading),
      ...children,
    );

  /** Shows new recovery codes once, in place of the view, until the user says they are saved. */
  const showCodes = (codes: string[], why: string) => {
    const panel = recoveryCodesPanel(app, codes, why, () => reload('recovery'));
    body.replaceChildren(panel);
    panel.querySelector<HTMLElement>('h2')?.focus();
  };

  let hasPassword = true;

  const render = async (): Promise<Child[]> => {
    const [status, me, identities, providers]: [MfaStatus, User, LinkedIdentity[], IdentityProvider[]] = await Promise.all([
      app.client.mfa.status(),
      app.client.me(),
      app.client.federation.identities(),
      app.providers(),
    ]);
    hasPassword = me.hasPassword !== false;
    const totp = status.methods.includes('totp');

    const current = passwordField('Current password', 'currentPassword');
    const next = field(
      hasPassword ? 'New password' : 'Password',
      'newPassword',
      { type: 'password', autocomplete: 'new-password', required: true, minlength: 8, maxlength: 128 },
      PASSWORD_HINT,
    );
    const changePassword = form({
      label: hasPassword ? 'Change your password' : 'Set a password',
      intro: hasPassword
        ? undefined
        : h('p', {}, 'This account has no password: you sign in with a passkey, an emailed code or a linked account. You may add one.'),
      fields: hasPassword ? [current, next] : [next],
      submit: hasPassword ? 'Change password' : 'Set password',
      onSubmit: async (values) => {
        await app.client.changePassword(
          hasPassword ? { currentPassword: values.currentPassword, newPassword: values.newPassword } : { newPassword: values.newPassword },
        );
        app.notify(hasPassword ? 'Your password was changed. Your other sessions were signed out.' : 'Your password is set.');
        reload('password');
      },
    });

    return [
      section('password', 'Password', changePassword),
      section('passkeys', 'Passkeys', ...passkeys(status)),
      // Only where the realm has identity providers (or the user is still linked to a removed one).
      (providers.length > 0 || identities.length > 0) && section('linked', 'Linked accounts', ...linked(identities, providers)),
      section('totp', 'Authenticator app', ...(totp ? totpOn() : totpOff())),
      section('keys', 'Security keys', ...keys(status)),
      section('recovery', 'Recovery codes', ...recovery(status)),
    ];
  };

  /** One credential in a list, with its removal (confirmed by the password, or a recent sign-in). */
  const credentialItem = (credential: MfaStatus['webauthnCredentials'][number], section: string) =>
    h(
      'li',
      { class: 'key' },
      h('h3', {}, credential.name),
      h('p', { class: 'muted' }, 'Added ', time(credential.createdAt), ' · last used ', time(credential.lastUsedAt, true)),
      credential.disabled &&
        h(
          'p',
          { class: 'warning' },
          'Disabled: its signature counter went back, so a copy of it may exist. It no longer signs you in — remove it and add it again.',
        ),
      h(
        'details',
        {},
        h('summary', {}, 'Remove', hidden(` ${credential.name}`)),
        form({
          label: `Remove ${credential.name}`,
          intro: hasPassword ? undefined : RECENT_SIGN_IN.cloneNode(true),
          fields: confirmation(hasPassword),
          submit: credential.passkey ? 'Remove this passkey' : 'Remove this key',
          submitClass: 'danger',
          onSubmit: async (values) => {
            await app.client.mfa.removeSecurityKey(credential.id, values.password);
            app.notify(`Removed “${credential.name}”.`);
            reload(section);
          },
        }),
      ),
    );

  const passkeys = (status: MfaStatus): Child[] => {
    const alert = liveRegion('error');
    const mine = status.webauthnCredentials.filter((c) => c.passkey);
    const name = field(
      'Name of the passkey',
      'name',
      { maxlength: 100, autocomplete: 'off', placeholder: 'e.g. Work laptop' },
      'Helps you tell your passkeys apart. Optional.',
    );
    const add = form({
      label: 'Create a passkey',
      fields: [name],
      submit: 'Create a passkey',
      onSubmit: async (values) => {
        const result = await app.client.passkeys.register(values.name ? { name: values.name } : {});
        app.notify(`Created the passkey “${result.credential.name}”.`);
        if (result.recoveryCodes) showCodes(result.recoveryCodes, 'Your passkey is created.');
        else reload('passkeys');
      },
    });
    return [
      h(
        'p',
        {},
        'A passkey signs you in with your fingerprint, face or device PIN — no password, nothing to type. Your phone, computer or password manager keeps it.',
      ),
      alert,
      mine.length > 0
        ? h(
            'ul',
            { class: 'keys', 'aria-label': 'Your passkeys' },
            mine.map((c) => credentialItem(c, 'passkeys')),
          )
        : h('p', { class: 'muted' }, 'No passkey yet.'),
      add,
    ];
  };

  /** The user's accounts at identity providers: unlink one, or link one of the realm's other providers. */
  const linked = (identities: LinkedIdentity[], providers: IdentityProvider[]): Child[] => {
    const alert = liveRegion('error');
    const nameOf = (alias: string) => providers.find((p) => p.alias === alias)?.displayName ?? alias;
    const unlink = (identity: LinkedIdentity) => {
      const name = nameOf(identity.provider);
      const button = action(
        'Unlink',
        async () => {
          try {
            await app.client.federation.unlink(identity.id);
          } catch (error) {
            if (error instanceof IdentityError && error.code === 'INVALID_USER_STATE') {
              throw new Problem(`${name} is your only way to sign in: set a password or create a passkey before unlinking it.`);
            }
            throw error;
          }
          app.notify(`Your ${name} account is unlinked.`);
          reload('linked');
        },
        alert,
        { class: 'secondary' },
      );
      button.append(hidden(` ${name}`));
      return button;
    };
    const others = providers.filter((p) => !identities.some((i) => i.provider === p.alias));
    return [
      h('p', {}, 'An account you have at one of these providers signs you in here, without a password.'),
      alert,
      identities.length > 0
        ? h(
            'ul',
            { class: 'keys', 'aria-label': 'Your linked accounts' },
            identities.map((identity) =>
              h(
                'li',
                { class: 'key' },
                h('h3', {}, nameOf(identity.provider)),
                h(
                  'p',
                  { class: 'muted' },
                  identity.email ? `${identity.email} · ` : '',
                  'Linked ',
                  time(identity.linkedAt),
                  ' · last used ',
                  time(identity.lastUsedAt, true),
                ),
                unlink(identity),
              ),
            ),
          )
        : h('p', { class: 'muted' }, 'No linked account yet.'),
      others.length > 0 &&
        h(
          'div',
          { class: 'actions' },
          others.map((provider) =>
            action(`Link ${provider.displayName}`, () => app.client.federation.link(provider.alias, { returnTo: app.returnTo }), alert, {
              class: 'secondary',
            }),
          ),
        ),
    ];
  };

  const totpOn = (): Child[] => {
    return [
      h('p', {}, badge('On', 'ok'), ' Sign-ins ask for a code from your authenticator app.'),
      h(
        'details',
        {},
        h('summary', {}, 'Turn off the authenticator app'),
        form({
          label: 'Turn off the authenticator app',
          intro: hasPassword ? undefined : RECENT_SIGN_IN.cloneNode(true),
          fields: confirmation(hasPassword),
          submit: 'Turn off',
          submitClass: 'danger',
          onSubmit: async (values) => {
            const mfa = await app.client.mfa.disableTotp(values.password);
            app.notify(mfa.enabled ? 'The authenticator app is off.' : 'The authenticator app is off: two-step verification is off.');
            reload('totp');
          },
        }),
      ),
    ];
  };

  const totpOff = (): Child[] => {
    const alert = liveRegion('error');
    const area = h('div');
    const start = action(
      'Set up an authenticator app',
      async () => {
        const setup = await app.client.mfa.setupTotp();
        const code = field('6-digit code from the app', 'code', {
          inputmode: 'numeric',
          autocomplete: 'one-time-code',
          required: true,
          maxlength: 10,
          spellcheck: 'false',
        });
        const key = setup.secret.replace(/(.{4})(?=.)/g, '$1 ');
        const heading = h('h3', { tabindex: -1 }, 'Scan the code');
        area.replaceChildren(
          heading,
          h(
            'ol',
            { class: 'steps' },
            h(
              'li',
              {},
              'Scan this QR code with an authenticator app (such as Aegis, Google Authenticator or 1Password).',
              h('img', { src: setup.qrCode, alt: 'QR code of the key for your authenticator app', class: 'qr', width: 200, height: 200 }),
            ),
            h(
              'li',
              {},
              'Cannot scan it? Enter this key in the app instead: ',
              h('code', { class: 'secret', 'aria-label': `Key: ${key}` }, key),
            ),
            h(
              'li',
              {},
              'Enter the code the app shows to finish.',
              form({
                label: 'Confirm the authenticator app',
                fields: [code],
                submit: 'Turn on',
                onSubmit: async (values) => {
                  const result = await app.client.mfa.confirmTotp(values.code.replace(/\s+/g, ''));
                  app.notify('The authenticator app is on.');
                  if (result.recoveryCodes) showCodes(result.recoveryCodes, 'Your authenticator app is on.');
                  else reload('totp');
                },
              }),
            ),
          ),
        );
        start.remove();
        heading.focus();
      },
      alert,
      { class: 'primary' },
    );
    return [h('p', {}, 'Sign-ins then ask for a code from an app on your phone, after the password.'), alert, start, area];
  };

  const keys = (status: MfaStatus): Child[] => {
    const alert = liveRegion('error');
    const name = field(
      'Name of the key',
      'name',
      { maxlength: 100, autocomplete: 'off', placeholder: 'e.g. Blue USB key' },
      'Helps you tell your keys apart. Optional.',
    );
    const add = form({
      label: 'Add a security key',
      fields: [name],
      submit: 'Add a security key',
      onSubmit: async (values) => {
        const result = await app.client.mfa.addSecurityKey(values.name ? { name: values.name } : {});
        app.notify(`Added “${result.credential.name}”.`);
        if (result.recoveryCodes) showCodes(result.recoveryCodes, `Your security key “${result.credential.name}” is added.`);
        else reload('keys');
      },
    });
    const list = status.webauthnCredentials.filter((c) => !c.passkey).map((c) => credentialItem(c, 'keys'));
    return [
      h('p', {}, 'A USB or NFC security key confirms sign-ins with a touch, after the password.'),
      alert,
      list.length > 0
        ? h('ul', { class: 'keys', 'aria-label': 'Your security keys' }, list)
        : h('p', { class: 'muted' }, 'No security key yet.'),
      add,
    ];
  };

  const recovery = (status: MfaStatus): Child[] => {
    if (!status.enabled) return [h('p', { class: 'muted' }, 'Recovery codes come with your first second factor.')];
    return [
      h('p', {}, `You have ${status.recoveryCodesRemaining} unused recovery code${status.recoveryCodesRemaining === 1 ? '' : 's'}.`),
      h(
        'details',
        {},
        h('summary', {}, 'Get new recovery codes'),
        form({
          label: 'Get new recovery codes',
          intro: h(
            'p',
            {},
            'Your current codes stop working.',
            hasPassword ? '' : ' Without a password, this needs a sign-in within the last 10 minutes.',
          ),
          fields: confirmation(hasPassword),
          submit: 'Get new codes',
          onSubmit: async (values) => {
            const codes = await app.client.mfa.regenerateRecoveryCodes(values.password);
            showCodes(codes, 'Your previous recovery codes no longer work.');
          },
        }),
      ),
    ];
  };

  reload();
  return { title: 'Security', content };
}

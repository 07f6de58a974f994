// Signed out: sign in (then the second factor; or at one of the realm's identity providers), create
// an account, forgotten password.
import type { MfaMethod } from '../../client/src/index';
import type { App, View } from './app';
import { action, field, form, h, liveRegion, title } from './dom';
import { describeError, PASSWORD_HINT } from './messages';

const emailField = (autocomplete = 'username') =>
  field('Email address', 'email', { type: 'email', autocomplete, required: true, inputmode: 'email', spellcheck: 'false' });

export function signInView(app: App): View {
  // `webauthn`: the browser offers the user's passkeys in the field's autofill.
  const email = emailField('username webauthn');
  const password = field('Password', 'password', { type: 'password', autocomplete: 'current-password', required: true });
  const passkeyAlert = liveRegion('error');
  // The autofill request waits while the page is open; the button aborts it before asking itself.
  const autofill = app.client.passkeys.autofill();
  autofill.result.catch(() => undefined);
  // One button per identity provider of the realm, when it has any; each leaves for the provider's page.
  void app
    .providers()
    .then((providers) =>
      passkeyAlert.after(
        ...providers.map((provider) =>
          action(
            `Sign in with ${provider.displayName}`,
            () => app.client.federation.signInWith(provider.alias, { returnTo: app.returnTo }),
            passkeyAlert,
          ),
        ),
      ),
    );
  const content = h(
    'section',
    { class: 'card' },
    title('Sign in'),
    form({
      label: 'Sign in',
      fields: [email, password],
      submit: 'Sign in',
      // The page follows the client: a second factor or the account opens when the state changes.
      onSubmit: (values) => app.client.signIn({ email: values.email, password: values.password }).then(() => undefined),
    }),
    h(
      'div',
      { class: 'alternatives', role: 'group', 'aria-label': 'Other ways to sign in' },
      passkeyAlert,
      action('Sign in with a passkey', () => app.client.passkeys.signIn().then(() => undefined), passkeyAlert),
      h('a', { class: 'button secondary', href: app.href('#email-code') }, 'Email me a sign-in code'),
    ),
    h('p', { class: 'aside' }, h('a', { href: app.href('#forgot-password') }, 'Forgot your password?')),
    h('p', { class: 'aside' }, 'New here? ', h('a', { href: app.href('#sign-up') }, 'Create an account')),
  );
  return { title: 'Sign in', content, leave: autofill.stop };
}

/**
 * Sign-in with an emailed code: the address, then the code. The email also holds a link back to
 * this page, which signs in only in this browser. `notice`: why the page opened here.
 */
export function emailCodeView(app: App, notice: string | null = null): View {
  const body = h('div', { class: 'stack' });
  const content = h('section', { class: 'card' }, title('Sign in with a code'), body);
  const codeStep = (address: string | null) => {
    const email = emailField();
    const code = field(
      'Code from the email',
      'code',
      { inputmode: 'numeric', autocomplete: 'one-time-code', required: true, maxlength: 12, spellcheck: 'false' },
      'Eight digits, valid for 10 minutes.',
    );
    const heading = h('h2', { tabindex: -1 }, address ? 'Check your email' : 'Enter the code');
    body.replaceChildren(
      heading,
      h(
        'p',
        {},
        address
          ? `If ${address} can sign in here, a code is on its way. Enter it below, or open the link in the email in this browser.`
          : 'Enter your email address and the code from the email.',
      ),
      form({
        label: 'Enter the code',
        fields: address ? [code] : [email, code],
        submit: 'Sign in',
        onSubmit: (values) =>
          app.client.emailCode.verify(address ?? values.email, values.code.replace(/[\s-]+/g, '')).then(() => undefined),
      }),
      h('p', { class: 'aside' }, h('button', { type: 'button', class: 'link', onclick: () => emailStep() }, 'Send a new code')),
    );
    heading.focus();
  };
  const emailStep = () => {
    const email = emailField();
    body.replaceChildren(
      form({
        label: 'Email me a sign-in code',
        intro: h('p', {}, 'We will email you a code. No password needed; a new account is made for a new address where sign-up is open.'),
        fields: [email],
        submit: 'Email me a code',
        onSubmit: async (values) => {
          await app.client.emailCode.send(values.email, { returnTo: app.returnTo });
          codeStep(values.email);
        },
      }),
    );
  };
  if (notice) codeStep(null);
  else emailStep();
  if (notice) body.prepend(h('p', { class: 'notice', role: 'status' }, notice));
  content.append(h('p', { class: 'aside' }, h('a', { href: app.href('') }, 'Back to sign in')));
  return { title: 'Sign in with a code', content };
}

type Mode = 'totp' | 'recovery' | 'webauthn';

/** The second step of a sign-in (or of a step-up, when a session was flagged): TOTP, security key or recovery code. */
export function secondFactorView(app: App, reason: 'sign-in' | 'step-up', known: readonly MfaMethod[] | null): View {
  const methods = known ?? ['totp', 'webauthn'];
  const body = h('div');
  const content = h(
    'section',
    { class: 'card' },
    title(reason === 'step-up' ? 'Confirm it is you' : 'Two-step verification'),
    h(
      'p',
      {},
      reason === 'step-up'
        ? 'This session no longer looks like the device that signed in. Confirm with your second factor to go on.'
        : 'The first step is done. Now confirm with your second factor.',
    ),
    body,
  );

  const verify = async (verification: Parameters<App['client']['verifyMfa']>[0]) => {
    try {
      await app.client.verifyMfa(verification);
    } catch (error) {
      // An expired or spent sign-in returns to the password step: say why there.
      if (app.client.getSnapshot().status === 'signed-out') app.notify(describeError(error));
      else throw error;
    }
  };

  const show = (mode: Mode) => {
    const others: [Mode, string][] = (
      [
        ['totp', 'Use your authenticator app'],
        ['webauthn', 'Use a security key or passkey'],
        ['recovery', 'Use a recovery code'],
      ] as [Mode, string][]
    ).filter(([other]) => other !== mode && (other === 'recovery' || methods.includes(other)));
    let main: HTMLElement;
    if (mode === 'webauthn') {
      const alert = liveRegion('error');
      main = h(
        'div',
        { class: 'stack' },
        h('p', {}, 'Use the security key or passkey you added to this account: press the button, then follow your browser.'),
        alert,
        action('Use security key or passkey', () => verify({ type: 'webauthn' }), alert, { class: 'primary' }),
      );
    } else {
      const code =
        mode === 'totp'
          ? field('Code from your authenticator app', 'code', {
              inputmode: 'numeric',
              autocomplete: 'one-time-code',
              required: true,
              maxlength: 10,
              spellcheck: 'false',
            })
          : field(
              'Recovery code',
              'code',
              { autocomplete: 'off', required: true, spellcheck: 'false', autocapitalize: 'off' },
              'Each recovery code works once.',
            );
      main = form({
        label: mode === 'totp' ? 'Confirm with the authenticator app' : 'Confirm with a recovery code',
        fields: [code],
        submit: 'Verify',
        onSubmit: (values) => verify({ type: mode, code: values.code.replace(/\s+/g, '') }),
      });
    }
    const switches = h(
      'div',
      { class: 'switches', role: 'group', 'aria-label': 'Other ways to confirm' },
      others.map(([other, label]) =>
        h(
          'button',
          {
            type: 'button',
            class: 'link',
            onclick: () => {
              show(other);
              body.querySelector<HTMLElement>('input, .primary')?.focus();
            },
          },
          label,
        ),
      ),
    );
    const cancel = h(
      'button',
      {
        type: 'button',
        class: 'link',
        onclick: () => {
          void app.client.signOut();
        },
      },
      reason === 'step-up' ? 'Sign out' : 'Cancel and sign in again',
    );
    body.replaceChildren(main, switches, h('p', { class: 'aside' }, cancel));
  };
  show(methods.includes('totp') ? 'totp' : 'webauthn');
  return { title: 'Two-step verification', content };
}

/** A view that replaces a form once it is done: a heading that takes the focus and what to do next. */
function done(view: HTMLElement, heading: string, lines: (string | Node)[], app: App): void {
  const head = title(heading);
  view.replaceChildren(
    head,
    ...lines.map((line) => h('p', {}, line)),
    h('p', { class: 'aside' }, h('a', { href: app.href('') }, 'Back to sign in')),
  );
  head.focus();
}

export function signUpView(app: App): View {
  const name = field('Full name', 'name', { autocomplete: 'name', required: true, maxlength: 100 });
  const email = emailField('email');
  const password = field(
    'Password',
    'password',
    { type: 'password', autocomplete: 'new-password', required: true, minlength: 8, maxlength: 128 },
    PASSWORD_HINT,
  );
  const content: HTMLElement = h(
    'section',
    { class: 'card' },
    title('Create an account'),
    form({
      label: 'Create an account',
      fields: [name, email, password],
      submit: 'Create account',
      onSubmit: async (values) => {
        await app.client.register({ name: values.name, email: values.email, password: values.password });
        done(
          content,
          'Check your email',
          [`We sent a link to ${values.email}. Open it to confirm your address; it is valid for 24 hours.`, 'You can sign in already.'],
          app,
        );
      },
    }),
    h('p', { class: 'aside' }, 'Have an account? ', h('a', { href: app.href('') }, 'Sign in')),
  );
  return { title: 'Create an account', content };
}

export function forgotPasswordView(app: App): View {
  const email = emailField();
  const content: HTMLElement = h(
    'section',
    { class: 'card' },
    title('Reset your password'),
    form({
      label: 'Reset your password',
      intro: h('p', {}, 'Enter the email address of your account. We will send you a link to choose a new password.'),
      fields: [email],
      submit: 'Email me a link',
      onSubmit: async (values) => {
        await app.client.forgotPassword(values.email);
        done(
          content,
          'Check your email',
          [`If an account uses ${values.email}, a link to reset its password is on its way. It is valid for one hour.`],
          app,
        );
      },
    }),
    h('p', { class: 'aside' }, h('a', { href: app.href('') }, 'Back to sign in')),
  );
  return { title: 'Reset your password', content };
}

// The pages the emails link to: /verify-email?token=… and /reset-password?token=….
import type { App, View } from './app';
import { action, field, form, h, liveRegion, say, title } from './dom';
import { PASSWORD_HINT, Problem } from './messages';

const backToAccount = (app: App, text: string) => h('p', { class: 'aside' }, h('a', { href: app.href('') }, text));

/**
 * The verification link's page. Opening it changes nothing: a mail scanner that runs scripts
 * opens links too. The page asks whether the reader created the account, and only the answer is
 * sent: "yes" verifies the address; "no" tells that someone else registered it, and the account
 * is taken over for the mailbox's owner (everything that someone set up on it removed).
 */
export function verifyEmailPage(app: App, token: string | null): View {
  const heading = title('Did you create this account?');
  const alert = liveRegion('error');
  const content = h('section', { class: 'card' }, heading, alert);
  const done = (head: string, ...text: string[]) => {
    heading.textContent = head;
    content.replaceChildren(heading, ...text.map((t) => h('p', {}, t)), backToAccount(app, 'Go to your account'));
    heading.focus();
  };
  if (!token) {
    heading.textContent = 'Your email address is not verified';
    content.append(h('p', {}, 'Sign in to your account to have a new link sent.'), backToAccount(app, 'Go to your account'));
    say(alert, 'This link is incomplete: open the link from the email once more.');
    return { title: 'Verify your email address', content };
  }
  const yes = action(
    'Yes, I created this account',
    async () => {
      await app.client.verifyEmail(token);
      done('Email address verified', 'Thank you: your email address is confirmed.');
      app.notify('Your email address is verified.');
    },
    alert,
    { class: 'primary' },
  );
  const no = action(
    'I didn’t create this account',
    async () => {
      await app.client.verifyEmail(token, { notMe: true });
      done(
        'The account is yours now',
        'Someone registered your address. Everything they set up is removed: their password, sign-in methods and sessions.',
        'Sign in with a code sent to your email, or choose a password with “Forgot your password?”.',
      );
      app.notify('The account is yours: everything someone else set up on it is removed.');
    },
    alert,
  );
  content.append(
    h('p', {}, 'Someone asked to create an account with your email address. Confirm only if it was you.'),
    h('div', { class: 'actions' }, yes, no),
    backToAccount(app, 'Go to your account'),
  );
  return { title: 'Verify your email address', content };
}

export function resetPasswordPage(app: App, token: string | null): View {
  const password = field(
    'New password',
    'password',
    { type: 'password', autocomplete: 'new-password', required: true, minlength: 8, maxlength: 128 },
    PASSWORD_HINT,
  );
  const repeat = field('Repeat the new password', 'repeat', { type: 'password', autocomplete: 'new-password', required: true });
  const content: HTMLElement = h('section', { class: 'card' }, title('Choose a new password'));
  if (!token) {
    const alert = liveRegion('error');
    content.append(alert, backToAccount(app, 'Ask for a new link'));
    say(alert, 'This link is incomplete: open the link from the email once more.');
    return { title: 'Choose a new password', content };
  }
  content.append(
    form({
      label: 'Choose a new password',
      fields: [password, repeat],
      submit: 'Set new password',
      onSubmit: async (values) => {
        if (values.password !== values.repeat) {
          repeat.setError('The two passwords differ.');
          throw new Problem('The two passwords differ.');
        }
        await app.client.resetPassword({ token, password: values.password });
        const head = title('Password changed');
        content.replaceChildren(
          head,
          h('p', {}, 'Sign in with your new password. Every session of your account was signed out.'),
          backToAccount(app, 'Sign in'),
        );
        head.focus();
        app.notify('Your password was changed.');
      },
    }),
    backToAccount(app, 'Back to sign in'),
  );
  return { title: 'Choose a new password', content };
}

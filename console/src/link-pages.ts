// The pages the emails link to: /verify-email?token=… and /reset-password?token=….
import type { App, View } from './app';
import { field, form, h, liveRegion, say, title } from './dom';
import { describeError, PASSWORD_HINT, Problem } from './messages';

const backToAccount = (app: App, text: string) => h('p', { class: 'aside' }, h('a', { href: app.href('') }, text));

export function verifyEmailPage(app: App, token: string | null): View {
  const heading = title('Verifying your email address');
  const status = h('p', {}, 'One moment…');
  const alert = liveRegion('error');
  const content = h('section', { class: 'card' }, heading, alert, status, backToAccount(app, 'Go to your account'));
  const fail = (message: string) => {
    heading.textContent = 'Your email address is not verified';
    status.textContent = 'Sign in to your account to have a new link sent.';
    say(alert, message);
  };
  if (!token) fail('This link is incomplete: open the link from the email once more.');
  else {
    app.client.verifyEmail(token).then(
      () => {
        heading.textContent = 'Email address verified';
        status.textContent = 'Thank you: your email address is confirmed.';
        app.notify('Your email address is verified.');
      },
      (error) => fail(describeError(error)),
    );
  }
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

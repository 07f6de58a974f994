// Small DOM helpers: elements are built with createElement and textContent only (the page's CSP
// closes innerHTML and every other string-to-markup sink).
import { IdentityError } from '../../client/src/index';
import { describeError } from './messages';

export type Child = Node | string | null | undefined | false;
type Value = string | number | boolean | null | undefined | ((event: Event) => void);
export type Props = Record<string, Value>;

/** An element: `on<event>` props become listeners, `true` an empty attribute, null/false nothing. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) element.append(child);
  return element;
}

let sequence = 0;
/** A document-unique id. */
export const uid = (prefix: string) => `${prefix}-${++sequence}`;

/** A heading that takes the focus when a view opens, so screen readers announce the new view. */
export const title = (text: string, level: 'h1' | 'h2' = 'h1') => h(level, { tabindex: -1, class: 'title' }, text);

export interface Field {
  name: string;
  element: HTMLElement;
  input: HTMLInputElement;
  setError(message: string | null): void;
}

/** A labelled input with an optional hint and an error line, both tied to it by aria-describedby. */
export function field(label: string, name: string, attrs: Props = {}, hint?: string): Field {
  const id = uid(name);
  const hintId = hint ? `${id}-hint` : null;
  const errorId = `${id}-error`;
  const input = h('input', { id, name, type: 'text', 'aria-describedby': [hintId, errorId].filter(Boolean).join(' '), ...attrs });
  const error = h('p', { id: errorId, class: 'field-error', hidden: true });
  return {
    name,
    input,
    element: h(
      'div',
      { class: 'field' },
      h('label', { for: id }, label),
      hintId && h('p', { id: hintId, class: 'hint' }, hint),
      input,
      error,
    ),
    setError(message) {
      error.textContent = message ?? '';
      error.hidden = !message;
      if (message) input.setAttribute('aria-invalid', 'true');
      else input.removeAttribute('aria-invalid');
    },
  };
}

/** A region whose changes screen readers read out: `assertive` for errors, `polite` for news. */
export function liveRegion(kind: 'error' | 'status'): HTMLElement {
  return kind === 'error'
    ? h('div', { class: 'alert', role: 'alert', 'aria-live': 'assertive', 'aria-atomic': 'true', hidden: true })
    : h('div', { class: 'notice', role: 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
}

/** Shows (or clears, with null) a message in a live region. */
export function say(region: HTMLElement, message: string | null): void {
  region.textContent = message ?? '';
  region.hidden = !message;
}

export interface FormOptions {
  /** Accessible name of the form. */
  label: string;
  fields: Field[];
  submit: string;
  /** Runs with the trimmed values (passwords untrimmed); a thrown error is shown on the form. */
  onSubmit(values: Record<string, string>, form: HTMLFormElement): Promise<void>;
  /** Shown before the fields. */
  intro?: Child;
  /** Shown after the submit button. */
  after?: Child[];
  submitClass?: string;
}

/**
 * A form that checks its required fields, disables its button while working, and shows errors in
 * its own live region (field errors of VALIDATION_FAILED next to their fields).
 */
export function form(options: FormOptions): HTMLFormElement {
  const alert = liveRegion('error');
  const button = h('button', { type: 'submit', class: options.submitClass ?? 'primary' }, options.submit);
  const element = h(
    'form',
    { 'aria-label': options.label, novalidate: true },
    options.intro,
    alert,
    options.fields.map((f) => f.element),
    h('div', { class: 'actions' }, button, options.after ?? []),
  );
  const fail = (message: string, focus?: HTMLInputElement) => {
    say(alert, message);
    focus?.focus();
  };
  element.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (button.disabled) return;
    say(alert, null);
    const values: Record<string, string> = {};
    const missing: Field[] = [];
    for (const f of options.fields) {
      f.setError(null);
      values[f.name] = f.input.type === 'password' ? f.input.value : f.input.value.trim();
      if (f.input.required && !values[f.name]) {
        f.setError('Required.');
        missing.push(f);
      }
    }
    if (missing.length > 0) {
      fail(`Please fill in: ${missing.map((f) => labelOf(f)).join(', ')}.`, missing[0].input);
      return;
    }
    button.disabled = true;
    element.setAttribute('aria-busy', 'true');
    try {
      await options.onSubmit(values, element);
    } catch (error) {
      const fieldErrors = error instanceof IdentityError ? (error.details ?? []) : [];
      let first: HTMLInputElement | undefined;
      for (const detail of fieldErrors) {
        const f = options.fields.find((candidate) => candidate.name === detail.field);
        if (f) {
          f.setError(sentence(detail.message));
          first ??= f.input;
        }
      }
      fail(describeError(error), first);
    } finally {
      button.disabled = false;
      element.removeAttribute('aria-busy');
    }
  });
  return element;
}

const labelOf = (f: Field) => f.element.querySelector('label')?.textContent ?? f.name;
const sentence = (text: string) => {
  const trimmed = text.trim();
  return trimmed.charAt(0).toUpperCase() + trimmed.slice(1) + (/[.!?]$/.test(trimmed) ? '' : '.');
};

/** A button that runs an action, disabled while it runs; errors go to `alert`. */
export function action(label: string, run: () => Promise<void>, alert: HTMLElement, props: Props = {}): HTMLButtonElement {
  const button = h('button', { type: 'button', ...props }, label);
  button.addEventListener('click', async () => {
    if (button.disabled) return;
    say(alert, null);
    button.disabled = true;
    try {
      await run();
    } catch (error) {
      say(alert, describeError(error));
    } finally {
      if (button.isConnected) button.disabled = false;
    }
  });
  return button;
}

/** A date as readable text in a <time> element, with the exact moment as its tooltip. */
export function time(iso: string | null, relative = false): HTMLElement | string {
  if (!iso) return 'never';
  const date = new Date(iso);
  const text = relative ? ago(date) : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  return h('time', { datetime: iso, title: date.toLocaleString() }, text);
}

function ago(date: Date): string {
  // A moment a little ahead of this device's clock is "just now" too.
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  if (seconds > -60) return 'just now';
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  for (const [unit, size] of [
    ['day', 86400],
    ['hour', 3600],
    ['minute', 60],
  ] as const) {
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  }
  return 'just now';
}

/** Fills `into` with what `load` builds; a failure is shown in an alert instead. */
export function loading(into: HTMLElement, load: () => Promise<Child[]>): Promise<void> {
  into.setAttribute('aria-busy', 'true');
  into.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  return load().then(
    (children) => {
      into.replaceChildren(...children.filter((c): c is Node | string => !!c));
      into.removeAttribute('aria-busy');
    },
    (error) => {
      const alert = liveRegion('error');
      into.replaceChildren(alert);
      into.removeAttribute('aria-busy');
      say(alert, describeError(error));
    },
  );
}

/** Words for screen readers only. */
export const hidden = (text: string) => h('span', { class: 'visually-hidden' }, text);

/** A term and its value in a description list. */
export const row = (term: string, ...value: Child[]) => [h('dt', {}, term), h('dd', {}, ...value)];

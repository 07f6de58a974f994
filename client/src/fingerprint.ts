/** The component names the service knows, with the weights documented beside its fingerprint rule. */
export const FINGERPRINT_KEYS = [
  'ua',
  'platform',
  'lang',
  'languages',
  'tz',
  'screen',
  'colorDepth',
  'dpr',
  'cores',
  'memory',
  'touch',
  'canvas',
  'webglVendor',
  'webglRenderer',
  'audio',
  'fonts',
  'cookies',
  'dnt',
] as const;

export type FingerprintKey = (typeof FINGERPRINT_KEYS)[number];

/** A flat map of device traits, sent as the `deviceFingerprint` JSON object. */
export type FingerprintComponents = Partial<Record<FingerprintKey, string | number | boolean>>;

let collected: Promise<FingerprintComponents> | undefined;

/**
 * The device fingerprint of this browser, computed once per page load (later calls return the
 * same promise). Rendering traits (`canvas`, `audio`, `fonts`) are SHA-256 hex digests made with
 * WebCrypto, so none of the raw renderings leaves the page. A trait the browser randomises is left
 * out when that shows (two renderings differ); every trait that cannot be read is left out, never
 * guessed. Outside a browser only the `navigator` traits that exist are returned.
 */
export function collectFingerprint(): Promise<FingerprintComponents> {
  return (collected ??= collect());
}

type Put = (key: FingerprintKey, value: unknown) => void;

async function collect(): Promise<FingerprintComponents> {
  const components: FingerprintComponents = {};
  const put: Put = (key, value) => {
    if (typeof value === 'number' ? Number.isFinite(value) : typeof value === 'boolean' || (typeof value === 'string' && value !== '')) {
      components[key] = typeof value === 'string' ? value.slice(0, 512) : (value as number | boolean);
    }
  };
  const nav = (typeof navigator === 'undefined' ? {} : navigator) as Partial<Navigator> & { deviceMemory?: number };
  put('ua', nav.userAgent);
  put('platform', nav.platform);
  put('lang', nav.language);
  put('languages', nav.languages?.join(','));
  put('cores', nav.hardwareConcurrency);
  put('memory', nav.deviceMemory);
  put('touch', nav.maxTouchPoints);
  put('cookies', nav.cookieEnabled);
  put('dnt', nav.doNotTrack);
  try {
    put('tz', Intl.DateTimeFormat().resolvedOptions().timeZone);
  } catch {
    // no Intl time zone data
  }
  if (typeof document === 'undefined') return components;
  const scr = globalThis.screen;
  if (scr) {
    put('screen', `${scr.width}x${scr.height}`);
    put('colorDepth', scr.colorDepth);
  }
  put('dpr', globalThis.devicePixelRatio);
  const digest = typeof crypto !== 'undefined' && crypto.subtle ? sha256 : null;
  const hash = async (render: () => string | Promise<string | undefined> | undefined, times: number) => {
    if (!digest) return undefined; // no WebCrypto outside a secure context: no rendering hashes
    try {
      const [first, ...again] = await Promise.all(Array.from({ length: times }, render));
      // A browser that adds noise to each reading renders differently twice: nothing stable to send.
      return first !== undefined && again.every((other) => other === first) ? digest(first) : undefined;
    } catch {
      return undefined;
    }
  };
  // The audio renders off the main thread: started first, it runs while the rest is measured.
  // Canvas and audio readings are where browsers add noise; font widths are not randomised.
  const audioHash = hash(audio, 2);
  webgl(put);
  const [canvasHash, fontsHash] = await Promise.all([hash(canvas, 2), hash(fonts, 1)]);
  put('audio', await audioHash);
  put('canvas', canvasHash);
  put('fonts', fontsHash);
  return components;
}

/** SHA-256 of a text, as 64 lower-case hex digits (WebCrypto). */
export async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function context2d(width: number, height: number): CanvasRenderingContext2D | null {
  const element = document.createElement('canvas');
  element.width = width;
  element.height = height;
  return element.getContext('2d');
}

function canvas(): string | undefined {
  const g = context2d(240, 60);
  if (!g) return undefined;
  g.textBaseline = 'alphabetic';
  g.fillStyle = '#f60';
  g.fillRect(100, 1, 62, 20);
  g.fillStyle = '#069';
  g.font = '11pt Arial';
  g.fillText('Cwm fjordbank glyphs vext quiz \u{1F603}', 2, 15);
  g.fillStyle = 'rgba(102, 204, 0, 0.7)';
  g.font = '18pt Arial';
  g.fillText('Cwm fjordbank glyphs vext quiz', 4, 45);
  g.globalCompositeOperation = 'multiply';
  for (const [color, x] of [
    ['#f2f', 40],
    ['#2ff', 80],
    ['#ff2', 60],
  ] as const) {
    g.fillStyle = color;
    g.beginPath();
    g.arc(x, 30, 25, 0, Math.PI * 2);
    g.fill();
  }
  return g.canvas.toDataURL();
}

function webgl(put: Put): void {
  try {
    const gl = document.createElement('canvas').getContext('webgl');
    if (!gl) return;
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    put('webglVendor', gl.getParameter(info ? info.UNMASKED_VENDOR_WEBGL : gl.VENDOR));
    put('webglRenderer', gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
    gl.getExtension('WEBGL_lose_context')?.loseContext();
  } catch {
    // WebGL disabled
  }
}

async function audio(): Promise<string | undefined> {
  const Offline = globalThis.OfflineAudioContext;
  if (!Offline) return undefined;
  const context = new Offline(1, 5000, 44100);
  const oscillator = context.createOscillator();
  oscillator.type = 'triangle';
  oscillator.frequency.value = 10000;
  const compressor = context.createDynamicsCompressor();
  compressor.threshold.value = -50;
  compressor.knee.value = 40;
  compressor.ratio.value = 12;
  compressor.attack.value = 0;
  compressor.release.value = 0.25;
  oscillator.connect(compressor);
  compressor.connect(context.destination);
  oscillator.start(0);
  // Some browsers never finish rendering in a background tab: give up rather than wait.
  const buffer = await Promise.race([context.startRendering(), new Promise<undefined>((resolve) => setTimeout(resolve, 500))]);
  return buffer ? Array.from(buffer.getChannelData(0).subarray(4000), (sample) => sample.toFixed(6)).join(',') : undefined;
}

const FONTS =
  'Arial,Arial Black,Calibri,Cambria,Cantarell,Century Gothic,Comic Sans MS,Consolas,Courier New,DejaVu Sans,DejaVu Serif,Droid Sans,Fira Sans,Franklin Gothic Medium,Futura,Garamond,Georgia,Gill Sans,Helvetica,Helvetica Neue,Impact,Liberation Mono,Liberation Sans,Liberation Serif,Lucida Console,Lucida Grande,Malgun Gothic,Menlo,Monaco,MS Gothic,Noto Color Emoji,Noto Sans,Optima,Palatino,Roboto,Segoe UI,SimSun,Tahoma,Times New Roman,Trebuchet MS,Ubuntu,Verdana'.split(
    ',',
  );

/** The installed fonts among a fixed list: a font is there when it changes the width of a text. */
function fonts(): string | undefined {
  const g = context2d(1, 1);
  if (!g) return undefined;
  const text = 'mmmmmmmmmmlli10OQ@&WwÅé';
  const bases = ['monospace', 'sans-serif', 'serif'];
  const width = (font: string) => {
    g.font = `72px ${font}`;
    return g.measureText(text).width;
  };
  const baseWidths = bases.map(width);
  return FONTS.filter((font) => bases.some((base, i) => width(`"${font}",${base}`) !== baseWidths[i])).join(',');
}

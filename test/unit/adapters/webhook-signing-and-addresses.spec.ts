import { Webhook as StandardWebhook } from 'standardwebhooks';
import { isPublicAddress } from '../../../src/adapters/outbound/public-address';
import { webhookSignature } from '../../../src/adapters/webhooks/webhook-sender';
import { loadConfig } from '../../../src/config/load-config';
import { webhookSecretFrom } from '../../../src/domain/webhook/webhook';

describe('webhook signatures', () => {
  const secret = webhookSecretFrom('q2pTb3lQ5V7sM0u8bS8cYc1m2yQyH2oYQ9Yv6l5uY_4');
  const body = JSON.stringify({ type: 'user.registered', data: { id: 'e1' } });
  const timestamp = Math.floor(Date.now() / 1000);

  it('writes secrets as whsec_ + standard base64 of 32 bytes', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
  });

  it('is verified by the reference library, alone and as one of two space-separated signatures', () => {
    const other = webhookSecretFrom('AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8');
    const headers = (signature: string) => ({ 'webhook-id': 'd1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature });
    expect(() => new StandardWebhook(secret).verify(body, headers(webhookSignature([secret], 'd1', timestamp, body)))).not.toThrow();
    const both = webhookSignature([other, secret], 'd1', timestamp, body);
    expect(() => new StandardWebhook(secret).verify(body, headers(both))).not.toThrow();
    expect(() => new StandardWebhook(other).verify(body, headers(both))).not.toThrow();
    expect(() => new StandardWebhook(other).verify(body, headers(webhookSignature([secret], 'd1', timestamp, body)))).toThrow();
    expect(() => new StandardWebhook(secret).verify(body, headers(webhookSignature([secret], 'd2', timestamp, body)))).toThrow();
  });
});

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.251',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    '2001:db8::1',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:93.184.216.34', '64:ff9b::8.8.8.8'])('accepts %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('WEBHOOK_RETRY_SCHEDULE', () => {
  it('defaults to 5s,5m,30m,2h,5h,10h,10h and reads units', () => {
    expect(loadConfig({}).webhookRetryScheduleSeconds).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1s, 2m,3h,1d,7' }).webhookRetryScheduleSeconds).toEqual([1, 120, 10800, 86400, 7]);
  });

  it.each(['5x', '0s', '8d', '5s,,5m', '-5s'])('refuses %j naming the variable', (value) => {
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: value })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
  });
});

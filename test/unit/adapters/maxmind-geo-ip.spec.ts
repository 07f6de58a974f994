import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { geoIpFor, MaxmindGeoIp } from '../../../src/adapters/geoip/maxmind-geo-ip';
import { NullGeoIp } from '../../../src/adapters/geoip/null-geo-ip';
import { loadConfig } from '../../../src/config/load-config';
import { buildMmdb } from '../../support/mmdb';

const city = (iso: string, country: string, name: string) => ({
  city: { geoname_id: 1, names: { en: name } },
  country: { geoname_id: 2, iso_code: iso, names: { en: country } },
});

describe('MaxmindGeoIp', () => {
  let dir: string;
  let cityDb: string;
  let countryDb: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'geoip-'));
    cityDb = join(dir, 'city.mmdb');
    countryDb = join(dir, 'country.mmdb');
    writeFileSync(
      cityDb,
      buildMmdb([
        { cidr: '203.0.113.0/24', data: city('DE', 'Germany', 'Berlin') },
        { cidr: '198.51.100.0/25', data: city('FR', 'France', 'Paris') },
        { cidr: '192.0.2.0/24', data: { registered_country: { geoname_id: 3, iso_code: 'NL', names: { en: 'Netherlands' } } } },
      ]),
    );
    writeFileSync(
      countryDb,
      buildMmdb(
        [{ cidr: '203.0.113.0/24', data: { country: { geoname_id: 2, iso_code: 'DE', names: { en: 'Germany' } } } }],
        'GeoLite2-Country',
      ),
    );
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers the ISO country code and the English city name of an address in the database', async () => {
    const geoIp = await MaxmindGeoIp.open(cityDb, { watch: false });
    expect(geoIp.locate('203.0.113.77')).toEqual({ country: 'DE', city: 'Berlin' });
    expect(geoIp.locate('198.51.100.5')).toEqual({ country: 'FR', city: 'Paris' });
  });

  it('falls back to the registered country, and gives no city from a Country database', async () => {
    expect((await MaxmindGeoIp.open(cityDb, { watch: false })).locate('192.0.2.1')).toEqual({ country: 'NL', city: null });
    expect((await MaxmindGeoIp.open(countryDb, { watch: false })).locate('203.0.113.1')).toEqual({ country: 'DE', city: null });
  });

  it.each([
    ['an address outside every network', '198.51.100.200'],
    ['a private address', '10.1.2.3'],
    ['an IPv6 address in an IPv4 database', '2001:db8::1'],
    ['something that is not an address', 'not-an-ip'],
    ['an empty string', ''],
  ])('answers nulls for %s', async (_what, ip) => {
    const geoIp = await MaxmindGeoIp.open(cityDb, { watch: false });
    expect(geoIp.locate(ip)).toEqual({ country: null, city: null });
  });

  it('refuses to start on a missing or unreadable file, naming GEOIP_DB', async () => {
    await expect(MaxmindGeoIp.open(join(dir, 'missing.mmdb'), { watch: false })).rejects.toThrow(/^GEOIP_DB: /);
    const garbage = join(dir, 'garbage.mmdb');
    writeFileSync(garbage, 'not a database');
    await expect(MaxmindGeoIp.open(garbage, { watch: false })).rejects.toThrow(/^GEOIP_DB: /);
  });

  describe('geoIpFor (the binding in app.module)', () => {
    it('uses the null adapter when GEOIP_DB is not set', async () => {
      const geoIp = await geoIpFor(loadConfig({}));
      expect(geoIp).toBeInstanceOf(NullGeoIp);
      expect(geoIp.locate('203.0.113.77')).toEqual({ country: null, city: null });
    });

    it('reads the MaxMind file when GEOIP_DB is set', async () => {
      const geoIp = await geoIpFor(loadConfig({ GEOIP_DB: cityDb }));
      expect(geoIp).toBeInstanceOf(MaxmindGeoIp);
      expect(geoIp.locate('203.0.113.77')).toEqual({ country: 'DE', city: 'Berlin' });
    });
  });
});

import { Injectable } from '@nestjs/common';
import maxmind, { CityResponse, Reader } from 'maxmind';
import { GeoIp } from '../../application/ports/geo-ip';
import { AppConfig } from '../../config/app-config';
import { SessionLocation } from '../../domain/session/session';
import { NullGeoIp } from './null-geo-ip';

const UNKNOWN: SessionLocation = { country: null, city: null };

/**
 * Locates addresses in a MaxMind DB file (GeoLite2/GeoIP2 City or Country, `GEOIP_DB`), read
 * with the maintained `maxmind` reader. `country` is the ISO 3166-1 alpha-2 code ("DE"), `city`
 * the English name ("Berlin"); a Country database gives no city. The file is reloaded when it
 * is replaced on disk (e.g. by geoipupdate), without a restart.
 */
@Injectable()
export class MaxmindGeoIp extends GeoIp {
  constructor(private readonly reader: Reader<CityResponse>) {
    super();
  }

  /** @throws Error naming GEOIP_DB when the file cannot be read as a MaxMind DB */
  static async open(path: string, options: { watch?: boolean } = {}): Promise<MaxmindGeoIp> {
    try {
      const watch = options.watch ?? true;
      const reader = await maxmind.open<CityResponse>(path, watch ? { watchForUpdates: true, watchForUpdatesNonPersistent: true } : {});
      return new MaxmindGeoIp(reader);
    } catch (error) {
      throw new Error(`GEOIP_DB: cannot read a MaxMind database at "${path}" (${(error as Error).message})`);
    }
  }

  override locate(ip: string): SessionLocation {
    if (!maxmind.validate(ip)) return UNKNOWN;
    let found: CityResponse | null;
    try {
      found = this.reader.get(ip);
    } catch {
      return UNKNOWN;
    }
    if (!found) return UNKNOWN;
    const country = found.country?.iso_code ?? found.registered_country?.iso_code ?? null;
    const city = found.city?.names?.en ?? null;
    return { country, city };
  }
}

/** The GeoIp adapter for the configuration: MaxMind when `GEOIP_DB` is set, else unknown locations. */
export async function geoIpFor(config: AppConfig): Promise<GeoIp> {
  return config.geoipDb ? MaxmindGeoIp.open(config.geoipDb) : new NullGeoIp();
}

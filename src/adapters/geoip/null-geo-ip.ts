import { Injectable } from '@nestjs/common';
import { GeoIp } from '../../application/ports/geo-ip';
import { SessionLocation } from '../../domain/session/session';

/** Location unknown: the default when no GeoIP database is configured. */
@Injectable()
export class NullGeoIp implements GeoIp {
  locate(): SessionLocation {
    return { country: null, city: null };
  }
}

import { SessionLocation } from '../../domain/session/session';

export abstract class GeoIp {
  /** Country and city of an address; nulls when unknown. */
  abstract locate(ip: string): SessionLocation;
}

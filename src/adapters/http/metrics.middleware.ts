import type { NextFunction, Request, Response } from 'express';
import { PrometheusMetrics } from '../metrics/prometheus-metrics';

/** The matched route template; requests that matched none share one label (bounded cardinality). */
function routeOf(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' && !path.includes('*') ? path : 'unmatched';
}

/** Observes every request when its response is finished or the client goes away. */
export function httpMetrics(metrics: PrometheusMetrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    // Emitted exactly once: after 'finish', or when the client went away first.
    res.on('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const errorCode = typeof res.locals.errorCode === 'string' ? res.locals.errorCode : undefined;
      metrics.observeRequest(req.method, routeOf(req), res.statusCode, seconds, errorCode);
    });
    next();
  };
}

import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { PrometheusMetrics } from '../../metrics/prometheus-metrics';
import { Public, RealmHeader } from '../decorators';
import { METRICS_EXAMPLE } from '../openapi/schemas';

/** Prometheus text format. Expose it to the scraper only, at the network level. */
@ApiTags('operations')
@Public()
@RealmHeader('none')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: PrometheusMetrics) {}

  @ApiOperation({ summary: 'Prometheus metrics (text exposition format)' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ schema: { type: 'string', example: METRICS_EXAMPLE } })
  @Get()
  async scrape(@Res({ passthrough: true }) res: Response): Promise<string> {
    const body = await this.metrics.render();
    res.setHeader('Content-Type', this.metrics.contentType());
    res.setHeader('Cache-Control', 'no-store');
    return body;
  }
}

import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { READINESS_PROBES, ReadinessProbe } from '../../../application/ports/readiness-probe';
import { Public, RealmHeader } from '../decorators';
import { LiveResponse, ReadyResponse } from '../openapi/schemas';

@ApiTags('operations')
@Public()
@RealmHeader('none')
@Controller('health')
export class HealthController {
  constructor(@Inject(READINESS_PROBES) private readonly probes: ReadinessProbe[]) {}

  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiOkResponse({ type: LiveResponse })
  @Get('live')
  live() {
    return { status: 'ok' };
  }

  /** 200 when the database is reachable and migrated; 503 otherwise. */
  @ApiOperation({ summary: 'Readiness: database reachable and migrated' })
  @ApiOkResponse({ type: ReadyResponse })
  @ApiServiceUnavailableResponse({ type: ReadyResponse, description: 'A critical check failed' })
  @Get('ready')
  async ready(@Res({ passthrough: true }) res: Response) {
    const checks = (await Promise.all(this.probes.map((p) => p.check()))).flat();
    const ready = checks.every((c) => c.ok || !c.critical);
    res.status(ready ? 200 : 503);
    return {
      status: ready ? 'ok' : 'unavailable',
      checks: Object.fromEntries(checks.map((c) => [c.name, { ok: c.ok, ...(c.detail !== undefined ? { detail: c.detail } : {}) }])),
    };
  }
}

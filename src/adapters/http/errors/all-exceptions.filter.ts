import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { AppRequest } from '../request-context';
import { renderError } from './render-error';

/** The one filter: every error leaves as the API's error envelope; unexpected ones are logged, never echoed. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<AppRequest>();
    const rendered = renderError(exception);
    if (rendered.unexpected) {
      this.logger.error(
        { err: exception, requestId: request?.requestId, route: request?.route?.path },
        rendered.status === 503 ? 'dependency unavailable' : 'unexpected error',
      );
    }
    if (response.headersSent) return;
    response.locals.errorCode = rendered.body.error.code; // for /metrics
    for (const [name, value] of Object.entries(rendered.headers)) response.setHeader(name, value);
    response.status(rendered.status).json(rendered.body);
  }
}

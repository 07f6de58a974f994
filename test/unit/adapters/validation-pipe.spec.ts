import { EmailLinkTokenDto } from '../../../src/adapters/http/dto/account.dto';
import { RegisterDto } from '../../../src/adapters/http/dto/auth.dto';
import { AppValidationPipe } from '../../../src/adapters/http/validation.pipe';
import { DomainError } from '../../../src/domain/errors';

async function failure(metatype: new () => object, body: unknown): Promise<DomainError> {
  const pipe = new AppValidationPipe();
  try {
    await pipe.transform(body, { type: 'body', metatype });
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('the body was accepted');
}

describe('AppValidationPipe', () => {
  it('refuses a body holding __proto__, constructor or prototype at any depth, rather than deleting the key silently', async () => {
    const error = await failure(RegisterDto, JSON.parse('{"email":"a@example.com","password":"p","name":"n","x":[{"__proto__":{}}]}'));
    expect(error.meta).toEqual({
      details: [{ field: 'x[0].__proto__', message: 'is a reserved key (__proto__, constructor and prototype are refused)' }],
    });
    expect((await failure(RegisterDto, { constructor: 'x' })).meta.details?.[0].field).toBe('constructor');
  });

  it('says a missing field is required, not that it breaks a length rule', async () => {
    const error = await failure(EmailLinkTokenDto, {});
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toBe('token is required');
    expect(error.meta).toEqual({ details: [{ field: 'token', message: 'is required' }] });
  });

  it('lists every missing field of a body, and reports a present but wrong one by its rule', async () => {
    const error = await failure(RegisterDto, { email: 'not an email' });
    const details = (error.meta as { details: { field: string; message: string }[] }).details;
    expect(details).toEqual(
      expect.arrayContaining([
        { field: 'password', message: 'is required' },
        { field: 'name', message: 'is required' },
      ]),
    );
    expect(details.find((detail) => detail.field === 'email')?.message).not.toBe('is required');
  });

  it('never puts the submitted value in a message', async () => {
    const secret = 'x'.repeat(300);
    const error = await failure(EmailLinkTokenDto, { token: secret });
    expect(JSON.stringify({ message: error.message, meta: error.meta })).not.toContain(secret);
  });
});

import { describe, expect, it } from 'vitest';
import { RestError } from '../../../../errors/rest-error.js';
import { createPasswordHasher } from '../../../../runtime/auth/passwords.js';
import { parseCredentials, userColumns } from '../../../../runtime/auth/users.js';
import { usernameKey } from '../../../../runtime/auth/usernames.js';

function rejection(fn: () => unknown): RestError {
  try {
    fn();
  } catch (e) {
    if (e instanceof RestError) return e;
    throw e;
  }
  throw new Error('accepted');
}

describe('parseCredentials', () => {
  it('returns exactly username and password', () => {
    expect(parseCredentials({ username: 'alice', password: 'secret12' })).toEqual({
      username: 'alice',
      password: 'secret12',
    });
  });

  it('keeps the strings as sent: the rules are checked by register and login', () => {
    expect(parseCredentials({ username: ' x', password: '' })).toEqual({ username: ' x', password: '' });
  });

  it.each([
    ['is_admin', { username: 'a', password: 'secret12', is_admin: true }, 'is_admin'],
    ['id', { username: 'a', password: 'secret12', id: 1 }, 'id'],
    [
      '__proto__ as own key',
      JSON.parse('{"username":"a","password":"secret12","__proto__":{"is_admin":true}}') as unknown,
      '__proto__',
    ],
    ['missing password', { username: 'a' }, 'password'],
    ['missing username', { password: 'secret12' }, 'username'],
    ['numeric password', { username: 'a', password: 12345678 }, 'password'],
    ['null username', { username: null, password: 'secret12' }, 'username'],
  ])('refuses a body with %s (400 invalid_body naming the field)', (_label, body, field) => {
    const e = rejection(() => parseCredentials(body));
    expect(e.status).toBe(400);
    expect(e.code).toBe('invalid_body');
    expect(e.details).toEqual({ field });
  });

  it.each([null, 'alice', 42, [], [{ username: 'a', password: 'secret12' }]])(
    'refuses the non-object body %j',
    (body) => {
      expect(rejection(() => parseCredentials(body)).code).toBe('invalid_body');
    },
  );
});

describe('userColumns', () => {
  const hasher = createPasswordHasher();

  it('normalises the username, fills the hidden key and hashes the password', async () => {
    const columns = await userColumns({ username: 'E\u0301lise', password: 'password1' }, { hasher });
    expect(columns['username']).toBe('\u00C9lise');
    expect(columns['username_key']).toBe(usernameKey('élise'));
    expect(columns['is_admin']).toBe(false);
    expect(await hasher.verifyPassword('password1', String(columns['password']))).toBe(true);
  });

  it('refuses a non-boolean is_admin', async () => {
    await expect(
      userColumns(
        { username: 'a', password: 'password1', is_admin: 'yes' as unknown as boolean },
        { hasher },
      ),
    ).rejects.toMatchObject({
      code: 'invalid_body',
      details: { field: 'is_admin' },
    });
  });
});

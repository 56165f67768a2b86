import { ConfigurationError, ValidationError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { CallbackSender, generateCallbackSecret, validateCallbackUrl } from '../../src/callbacks/index.js';

/** The issue a refused URL reports (what the HTTP layer shows in its 400), or 'ok'. */
function verdict(url: string, policy?: Parameters<typeof validateCallbackUrl>[1]): string {
  try {
    validateCallbackUrl(url, policy);
    return 'ok';
  } catch (error) {
    expect(ValidationError.isInstance(error)).toBe(true);
    return (error as ValidationError).issues.join('; ');
  }
}

describe('validateCallbackUrl', () => {
  it('accepts public http and https URLs and returns them parsed', () => {
    expect(validateCallbackUrl('https://hooks.example.com/switchboard?x=1').href).toBe(
      'https://hooks.example.com/switchboard?x=1',
    );
    expect(verdict('http://93.184.216.34:8080/hook')).toBe('ok');
  });

  it('refuses other schemes, credentials, relative and over-long URLs, each with its reason', () => {
    expect(verdict('ftp://hooks.example.com/')).toBe('callbackUrl: only http and https URLs are accepted');
    expect(verdict('file:///etc/passwd')).toBe('callbackUrl: only http and https URLs are accepted');
    expect(verdict('javascript:alert(1)')).toBe('callbackUrl: only http and https URLs are accepted');
    expect(verdict('https://user:pass@hooks.example.com/')).toBe(
      'callbackUrl: must not contain a user name or password',
    );
    expect(verdict('/relative/path')).toBe('callbackUrl: not an absolute URL');
    expect(verdict('')).toBe('callbackUrl: expected a URL');
    expect(verdict(`https://hooks.example.com/${'a'.repeat(2048)}`)).toBe(
      'callbackUrl: longer than 2048 characters',
    );
  });

  it('refuses loopback, private, link-local and metadata addresses in every spelling unless allowed', () => {
    const refused = 'callbackUrl: loopback, private and link-local addresses are not accepted';
    for (const url of [
      'http://127.0.0.1:3000/',
      'http://localhost/',
      'http://LOCALHOST./',
      'http://api.localhost/',
      'http://2130706433/', // 127.0.0.1 as one number
      'http://0x7f.1/',
      'http://10.1.2.3/',
      'http://172.20.0.1/',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://0.0.0.0/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[fd00::1]/',
      'http://[fe80::1]/',
    ])
      expect(verdict(url), url).toBe(refused);
    expect(verdict('http://127.0.0.1:3000/', { allowPrivateAddresses: true })).toBe('ok');
    expect(verdict('http://[::1]/', { allowPrivateAddresses: true })).toBe('ok');
  });

  it('with an allow-list, accepts only its hosts: exact names, IPs (private ones included), and *. subdomains', () => {
    const policy = { allowedHosts: ['hooks.example.com', '*.receivers.example.org', '127.0.0.1', '::1'] };
    expect(verdict('https://hooks.example.com/a', policy)).toBe('ok');
    expect(verdict('https://HOOKS.example.com./a', policy)).toBe('ok');
    expect(verdict('https://a.receivers.example.org/', policy)).toBe('ok');
    expect(verdict('https://a.b.receivers.example.org/', policy)).toBe('ok');
    expect(verdict('http://127.0.0.1:4000/', policy)).toBe('ok');
    expect(verdict('http://[::1]:4000/', policy)).toBe('ok');
    const refused = 'callbackUrl: this host is not among the allowed callback hosts';
    expect(verdict('https://receivers.example.org/', policy)).toBe(refused);
    expect(verdict('https://evilreceivers.example.org/', policy)).toBe(refused);
    expect(verdict('https://hooks.example.com.evil.test/', policy)).toBe(refused);
    expect(verdict('https://other.example.com/', policy)).toBe(refused);
    expect(verdict('http://127.0.0.2/', policy)).toBe(refused);
    expect(verdict('ftp://hooks.example.com/', policy)).toBe(
      'callbackUrl: only http and https URLs are accepted',
    );
  });

  it('a sender checks URLs against its own policy, and refuses a malformed allow-list when it is built', () => {
    const secret = generateCallbackSecret();
    const sender = new CallbackSender({ secret, allowedHosts: ['127.0.0.1'] });
    expect(sender.validateUrl('http://127.0.0.1:9/x').port).toBe('9');
    expect(() => sender.validateUrl('https://hooks.example.com/')).toThrow(
      /not among the allowed callback hosts/,
    );
    for (const entry of [
      'https://hooks.example.com',
      'hooks.example.com:443',
      'hooks.example.com/path',
      '*.',
      '*.10.0.0.1',
      '',
    ])
      expect(() => new CallbackSender({ secret, allowedHosts: [entry] }), entry).toThrow(ConfigurationError);
  });
});

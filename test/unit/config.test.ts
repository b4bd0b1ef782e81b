import { deprecatedSettings, loadConfig } from '../../server/platform/config';

describe('worker settings', () => {
  it('reads WORKER_ENABLED and WORKER_TICK_SECONDS', () => {
    const config = loadConfig({}, { WORKER_ENABLED: '0', WORKER_TICK_SECONDS: '7' });
    expect(config).toMatchObject({ workerEnabled: false, workerTickSeconds: 7 });
    expect(deprecatedSettings({ WORKER_ENABLED: '0', WORKER_TICK_SECONDS: '7' })).toEqual([]);
  });

  it('still reads SENDING_ENABLED and SENDING_TICK_SECONDS, with a deprecation line for each', () => {
    const env = { SENDING_ENABLED: '0', SENDING_TICK_SECONDS: '9' };
    expect(loadConfig({}, env)).toMatchObject({ workerEnabled: false, workerTickSeconds: 9 });
    expect(deprecatedSettings(env)).toEqual([
      'SENDING_ENABLED is deprecated: it governs every worker job, not sending alone; set WORKER_ENABLED instead.',
      'SENDING_TICK_SECONDS is deprecated: it governs every worker job, not sending alone; set WORKER_TICK_SECONDS instead.',
    ]);
  });

  it('prefers the new name when both are set', () => {
    const env = { SENDING_TICK_SECONDS: '9', WORKER_TICK_SECONDS: '3' };
    expect(loadConfig({}, env).workerTickSeconds).toBe(3);
    expect(deprecatedSettings(env)).toEqual([
      'SENDING_TICK_SECONDS is deprecated: it governs every worker job, not sending alone; set WORKER_TICK_SECONDS instead (WORKER_TICK_SECONDS is set and wins).',
    ]);
  });
});

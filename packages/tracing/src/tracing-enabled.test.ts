import { tracingEnabled } from './tracing-enabled';

describe('tracingEnabled', () => {
  it('is off without OTEL_* variables: tracing is off by default', () => {
    expect(tracingEnabled({})).toBe(false);
  });

  it('is on when an exporter or an OTLP endpoint is named', () => {
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(
      true,
    );
  });

  it('is off when told so, whatever else is set', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracingEnabled({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(tracingEnabled({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toBe(false);
  });
});

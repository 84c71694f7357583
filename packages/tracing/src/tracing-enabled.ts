/**
 * Tracing is off unless the standard OpenTelemetry variables ask for an exporter: OTEL_TRACES_EXPORTER naming one
 * (other than `none`), or an OTLP endpoint. OTEL_SDK_DISABLED=true turns it off whatever else is set. Off, no SDK is
 * loaded and every span call is the API's no-op.
 */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (exporters.includes('none')) return false;
  return (
    exporters.length > 0 ||
    Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) ||
    Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim())
  );
}

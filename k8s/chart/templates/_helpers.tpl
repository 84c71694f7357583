{{/*
Object names are fixed (conveyor-gateway, conveyor-secrets, …): the services find each other and their Secrets by
these names (ORCHESTRATOR_ADDR, conveyor-<service>-tls), so install one release per namespace.
*/}}

{{/* Labels of every object: the release's, and its service's name and component when given. */}}
{{- define "conveyor.labels" -}}
{{- $labels := dict "app.kubernetes.io/part-of" "conveyor" "app.kubernetes.io/instance" .root.Release.Name -}}
{{- with .name }}{{ $_ := set $labels "app.kubernetes.io/name" . }}{{ end -}}
{{- with .component }}{{ $_ := set $labels "app.kubernetes.io/component" . }}{{ end -}}
{{- toYaml $labels -}}
{{- end }}

{{/* A service's image: <repository>/<service>:<tag>, or the digest when one is given. */}}
{{- define "conveyor.image" -}}
{{- $image := .root.Values.image -}}
{{- $digest := index ($image.digests | default dict) .service -}}
{{- if $digest -}}
{{ $image.repository }}/{{ .service }}@{{ $digest }}
{{- else -}}
{{ $image.repository }}/{{ .service }}:{{ $image.tag | default .root.Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/* The public base URL: publicUrl, else the Ingress host (https with TLS). */}}
{{- define "conveyor.publicUrl" -}}
{{- $v := .Values -}}
{{- if $v.publicUrl -}}
{{ trimSuffix "/" $v.publicUrl }}
{{- else if and $v.ingress.enabled $v.ingress.host -}}
{{ ternary "https" "http" $v.ingress.tls.enabled }}://{{ $v.ingress.host }}
{{- else -}}
{{- fail "publicUrl (or ingress.host) is required: the URL users and webhook senders reach the platform at" -}}
{{- end -}}
{{- end }}

{{/*
One environment variable from a credential: from the operator's Secret (`secret`, `key`), else from
conveyor-credentials when `value` is given; an optional one is left out when neither is, a required one fails the
render. Arguments: env, value, secret, key, optional, what.
*/}}
{{- define "conveyor.secretEnv" -}}
{{- if .secret }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- else if .value }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: conveyor-credentials
      key: {{ .env }}
{{- else if not .optional }}
{{- fail (printf "%s is required: set %s (no credential has a default)" .env .what) }}
{{- end }}
{{- end }}

{{- define "conveyor.env.database" -}}
{{- $pg := .Values.postgresql -}}
{{- include "conveyor.secretEnv" (dict "env" "DATABASE_URL" "value" $pg.url "secret" $pg.existingSecret.name "key" $pg.existingSecret.key "what" "postgresql.url or postgresql.existingSecret.name") }}
{{- end }}

{{- define "conveyor.env.redis" -}}
{{- $redis := .Values.redis -}}
{{- include "conveyor.secretEnv" (dict "env" "REDIS_URL" "value" $redis.url "secret" $redis.existingSecret.name "key" $redis.existingSecret.key "what" "redis.url or redis.existingSecret.name") }}
{{- end }}

{{- define "conveyor.env.kafka" -}}
{{- $kafka := .Values.kafka -}}
{{- $secret := $kafka.existingSecret -}}
{{- include "conveyor.secretEnv" (dict "env" "KAFKA_BROKERS" "value" $kafka.brokers "secret" $secret.name "key" $secret.brokersKey "what" "kafka.brokers or kafka.existingSecret.name") }}
{{- include "conveyor.secretEnv" (dict "env" "KAFKA_SASL_USERNAME" "value" $kafka.sasl.username "secret" $secret.name "key" $secret.saslUsernameKey "optional" true) }}
{{- include "conveyor.secretEnv" (dict "env" "KAFKA_SASL_PASSWORD" "value" $kafka.sasl.password "secret" $secret.name "key" $secret.saslPasswordKey "optional" true) }}
{{- end }}

{{- define "conveyor.env.platformKeys" -}}
{{- $keys := .Values.platformKeys -}}
{{- $secret := $keys.existingSecret -}}
{{- include "conveyor.secretEnv" (dict "env" "CONVEYOR_SECRETS_KEY" "value" $keys.secretsKey "secret" $secret.name "key" $secret.secretsKeyKey "what" "platformKeys.secretsKey or platformKeys.existingSecret.name") }}
{{- include "conveyor.secretEnv" (dict "env" "BLOB_SIGNING_SECRET" "value" $keys.blobSigningSecret "secret" $secret.name "key" $secret.blobSigningSecretKey "what" "platformKeys.blobSigningSecret or platformKeys.existingSecret.name") }}
# Only during a key rotation (docs/operations.md): the keys being retired, still accepted.
{{- include "conveyor.secretEnv" (dict "env" "CONVEYOR_SECRETS_PREVIOUS_KEYS" "value" $keys.previousSecretsKeys "secret" $secret.name "key" $secret.previousSecretsKeysKey "optional" true) }}
{{- include "conveyor.secretEnv" (dict "env" "BLOB_SIGNING_PREVIOUS_SECRETS" "value" $keys.previousBlobSigningSecrets "secret" $secret.name "key" $secret.previousBlobSigningSecretsKey "optional" true) }}
{{- end }}

{{/* A setting's value as the quoted string a ConfigMap holds; YAML numbers (floats to Helm) as integers when whole. */}}
{{- define "conveyor.settingValue" -}}
{{- if and (kindIs "float64" .) (eq (float64 (int64 .)) .) -}}
{{ int64 . | toString | quote }}
{{- else -}}
{{ toString . | quote }}
{{- end -}}
{{- end }}

{{/*
A service's Deployment (always with this pod hardening: uid 1000, read-only root, no capabilities, no token unless
its own template mounts one), Service-facing probes on the port named http, its gRPC certificate at /etc/conveyor/tls.
Arguments: root, service, component, values (the service's values), ports (extra container ports, YAML), env (YAML),
serviceAccount, terminationGracePeriodSeconds, volumeMounts and volumes (extra, YAML), readinessPath (default /readyz;
the edge services pass /readyz/local: every replica shares their dependencies, so a dependency's outage must answer 503
from each replica rather than empty their Service).
*/}}
{{- define "conveyor.deployment" -}}
{{- $name := printf "conveyor-%s" .service -}}
{{- $labels := include "conveyor.labels" (dict "root" .root "name" $name "component" .component) -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels:
    {{- $labels | nindent 4 }}
spec:
  {{- if not .values.autoscaling.enabled }}
  replicas: {{ .values.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      app.kubernetes.io/name: {{ $name }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
  template:
    metadata:
      labels:
        {{- $labels | nindent 8 }}
      annotations:
        prometheus.io/scrape: 'true'
        prometheus.io/port: '{{ .httpPort }}'
        prometheus.io/path: /metrics
        # A changed conveyor-config rolls the pods on `helm upgrade` (envFrom is read at start only).
        checksum/config: {{ include (print .root.Template.BasePath "/configmap.yaml") .root | sha256sum }}
        {{- with .root.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- with .podComment }}
      {{- . | nindent 6 }}
      {{- end }}
      serviceAccountName: {{ .serviceAccount }}
      automountServiceAccountToken: false
      {{- with .terminationComment }}
      {{- . | nindent 6 }}
      {{- end }}
      terminationGracePeriodSeconds: {{ .terminationGracePeriodSeconds }}
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        runAsGroup: 1000
        fsGroup: 1000
        # The runner's snapshot claim keeps its owner across deploys: no recursive chown of every archive at each start.
        fsGroupChangePolicy: OnRootMismatch
        seccompProfile:
          type: RuntimeDefault
      {{- with .root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if .spread }}
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              app.kubernetes.io/name: {{ $name }}
      {{- end }}
      containers:
        - name: {{ .service }}
          image: {{ include "conveyor.image" (dict "root" .root "service" .service) }}
          imagePullPolicy: {{ .root.Values.image.pullPolicy }}
          ports:
            {{- with .ports }}
            {{- . | nindent 12 }}
            {{- end }}
            - name: http
              containerPort: {{ .httpPort }}
          envFrom:
            - configMapRef:
                name: conveyor-config
          env:
            {{- .env | trim | nindent 12 }}
          # Probes sized for a node whose CPU run Pods take (bench/README.md, "20 at once"): a process that answers
          # slowly is starved, not wedged, and restarting it ends the runs it carries. Liveness kills only after a
          # minute without any answer; a slow /healthz or /readyz is not a failure for 10 s.
          startupProbe:
            httpGet:
              path: /healthz
              port: http
            periodSeconds: 2
            timeoutSeconds: 10
            failureThreshold: 60
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            periodSeconds: 10
            timeoutSeconds: 10
            failureThreshold: 6
          readinessProbe:
            httpGet:
              path: {{ .readinessPath | default "/readyz" }}
              port: http
            periodSeconds: 5
            timeoutSeconds: 10
            failureThreshold: 3
          lifecycle:
            preStop:
              # Let endpoints drop this pod before the process stops taking work.
              exec:
                command: ['sleep', '5']
          resources:
            {{- toYaml .values.resources | nindent 12 }}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: ['ALL']
          volumeMounts:
            # This service's gRPC certificate, key and the installation CA (docs/service-trust.md).
            - name: grpc-tls
              mountPath: /etc/conveyor/tls
              readOnly: true
            - name: tmp
              mountPath: /tmp
            {{- with .volumeMounts }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- with .values.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        # ca.crt, tls.crt, tls.key: a cert-manager Certificate's Secret, or made from `conveyor pki init` (deploy/README.md).
        - name: grpc-tls
          secret:
            secretName: {{ $name }}-tls
            # Owner-read only (0400 octal).
            defaultMode: 256
        - name: tmp
          emptyDir: {}
        {{- with .volumes }}
        {{- . | nindent 8 }}
        {{- end }}
        {{- with .values.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
{{- end }}

{{/* A service's autoscaler (or none: then the Deployment's replicas) and disruption budget. Arguments: root, service, values. */}}
{{- define "conveyor.scaling" -}}
{{- $name := printf "conveyor-%s" .service -}}
{{- if .values.autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ $name }}
  labels:
    {{- include "conveyor.labels" (dict "root" .root) | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ $name }}
  minReplicas: {{ .values.autoscaling.minReplicas }}
  maxReplicas: {{ .values.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ .values.autoscaling.targetCPUUtilizationPercentage }}
{{- end }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $name }}
  labels:
    {{- include "conveyor.labels" (dict "root" .root) | nindent 4 }}
spec:
  maxUnavailable: {{ .values.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels:
      app.kubernetes.io/name: {{ $name }}
{{- end }}

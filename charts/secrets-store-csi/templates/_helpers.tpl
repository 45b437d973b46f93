{{/*
Name of the driver: upstream's chart name, so `helm upgrade` of an upstream release keeps
its DaemonSet name and (immutable) selector and rolls the pods in place.
*/}}
{{- define "sscd.name" -}}
{{- default "secrets-store-csi-driver" .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Name of the driver DaemonSet: <release>-<name>, or the release name when it contains
<name>, as upstream's chart.
*/}}
{{- define "sscd.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "sscd.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object, without `app` (each DaemonSet selects on its own `app`). */}}
{{- define "sscd.baseLabels" -}}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
app.kubernetes.io/name: {{ include "sscd.name" . | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: secrets-store-csi
helm.sh/chart: {{ printf "%s-%s" .Chart.Name (.Chart.Version | replace "+" "_") | quote }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Labels of the driver's objects (upstream's set, with `app: <name>`). */}}
{{- define "sscd.labels" -}}
{{ include "sscd.baseLabels" . }}
app: {{ include "sscd.name" . }}
{{- end -}}

{{/* "repository@digest" when a digest is set, else "repository:tag". Takes an image map. */}}
{{- define "sscd.image" -}}
{{- if .digest -}}
{{- printf "%s@%s" .repository .digest -}}
{{- else -}}
{{- printf "%s:%v" .repository .tag -}}
{{- end -}}
{{- end -}}

{{/* Whether the rotation reconciler is asked for (and gets its RBAC): "true" or "". auto renders upstream's RBAC; the driver then picks its mode by its rights. */}}
{{- define "sscd.reconciler" -}}
{{- if and .Values.enableSecretRotation (eq (toString .Values.rotationMode) "reconciler") }}true{{ end -}}
{{- end -}}

{{/* The driver's --log-level: logLevel, else derived from upstream's klog logVerbosity. */}}
{{- define "sscd.logLevel" -}}
{{- if .Values.logLevel -}}
{{- .Values.logLevel -}}
{{- else if ge (int .Values.logVerbosity) 4 -}}
debug
{{- else -}}
info
{{- end -}}
{{- end -}}

{{/* The port of --metrics-addr (":8095", "0.0.0.0:8095" -> 8095); "" when disabled. */}}
{{- define "sscd.metricsPort" -}}
{{- with .Values.linux.metricsAddr -}}
{{- regexFind "[0-9]+$" (toString .) -}}
{{- end -}}
{{- end -}}

{{/* The ServiceAccount the driver runs as and the roles bind (upstream's fixed name). */}}
{{- define "sscd.serviceAccountName" -}}
secrets-store-csi-driver
{{- end -}}

{{/*
Comma-separated names of the CRDs this release renders (linux.crds.enabled: ours;
syncController.enabled: SecretSync's) that exist in the cluster but belong to another owner
(no Helm ownership of this release): upstream's charts (the driver's, and
secrets-store-sync-controller's) install CRDs from crds/ without it, and Helm refuses to
take such objects over. Empty under `helm template` (no cluster).
*/}}
{{- define "sscd.foreignCrds" -}}
{{- $names := list }}
{{- $paths := list }}
{{- if .Values.linux.crds.enabled }}
{{- range $path, $_ := $.Files.Glob "files/crds/*.yaml" }}
{{- $paths = append $paths $path }}
{{- end }}
{{- end }}
{{- if (default dict .Values.syncController).enabled }}
{{- $paths = append $paths "files/sync-controller/secretsyncs-crd.yaml" }}
{{- end }}
{{- range $path := $paths }}
{{- $name := ($.Files.Get $path | fromYaml).metadata.name }}
{{- $live := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" $name }}
{{- if $live }}
{{- $release := dig "metadata" "annotations" "meta.helm.sh/release-name" "" $live }}
{{- $namespace := dig "metadata" "annotations" "meta.helm.sh/release-namespace" "" $live }}
{{- if not (and (eq $release $.Release.Name) (eq $namespace $.Release.Namespace)) }}
{{- $names = append $names $name }}
{{- end }}
{{- end }}
{{- end }}
{{- join "," $names -}}
{{- end -}}

{{/*
The SecretSync controller's audiences as a comma list, from syncController.tokenRequestAudience:
upstream secrets-store-sync-controller's shape ([{audience: vault}]) or plain strings;
empty entries dropped.
*/}}
{{- define "sscd.syncControllerAudiences" -}}
{{- $audiences := list }}
{{- range (default list .Values.syncController.tokenRequestAudience) }}
{{- $a := . }}
{{- if kindIs "map" . }}
{{- $a = get . "audience" }}
{{- end }}
{{- if $a }}
{{- $audiences = append $audiences (toString $a) }}
{{- end }}
{{- end }}
{{- join "," $audiences -}}
{{- end -}}

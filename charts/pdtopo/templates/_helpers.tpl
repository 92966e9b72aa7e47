{{/*
The prefix of every object name: the release name when it contains the
chart's name, else "<release>-<chart>"; at most 36 characters, so that the
longest Service name ("<fullname>-controller-manager-metrics") stays a DNS
label. With the release "pdtopo" the names are config/default's.
*/}}
{{- define "pdtopo.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 36 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 36 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 36 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The app.kubernetes.io/name of every object: the chart's name or nameOverride. */}}
{{- define "pdtopo.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "pdtopo.labels" -}}
app.kubernetes.io/name: {{ include "pdtopo.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
The manager pods' selector (config/manager's): this release's name and
instance, so that two releases, or two operators in one namespace, never
select each other's pods. Selectors of a Deployment are immutable: changing
these needs the Deployment deleted first (docs/helm.md, Upgrades).
*/}}
{{- define "pdtopo.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pdtopo.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{/*
An image reference from {repository, tag, digest}: REPO:TAG, REPO@DIGEST or
REPO:TAG@DIGEST; the tag defaults to the chart's appVersion.
Call with (dict "image" .Values.image "root" .).
*/}}
{{- define "pdtopo.image" -}}
{{- $tag := .image.tag | default .root.Chart.AppVersion -}}
{{- if and .image.digest (not .image.tag) -}}
{{- printf "%s@%s" .image.repository .image.digest -}}
{{- else if .image.digest -}}
{{- printf "%s:%s@%s" .image.repository $tag .image.digest -}}
{{- else -}}
{{- printf "%s:%s" .image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* The names the manager's flags and the objects share. */}}
{{- define "pdtopo.serviceAccountName" -}}{{ include "pdtopo.fullname" . }}-controller-manager{{- end -}}
{{- define "pdtopo.webhookSecretName" -}}{{ include "pdtopo.fullname" . }}-webhook-server-cert{{- end -}}
{{- define "pdtopo.webhookServiceName" -}}{{ include "pdtopo.fullname" . }}-webhook-service{{- end -}}
{{- define "pdtopo.mutatingWebhookName" -}}{{ include "pdtopo.fullname" . }}-mutating-webhook-configuration{{- end -}}
{{- define "pdtopo.validatingWebhookName" -}}{{ include "pdtopo.fullname" . }}-validating-webhook-configuration{{- end -}}
{{- define "pdtopo.certificateName" -}}{{ include "pdtopo.fullname" . }}-serving-cert{{- end -}}

{{/* The cert-manager CA-injection annotation on webhook configurations. */}}
{{- define "pdtopo.webhookAnnotations" -}}
{{- if eq .Values.webhook.certs "certManager" -}}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ include "pdtopo.certificateName" . }}
{{- end -}}
{{- end -}}

{{/*
One object of a multi-document file under files/, as YAML: the first of
the given kind. Call with (dict "root" . "file" "files/…" "kind" "…") and
read it with fromYaml.
*/}}
{{- define "pdtopo.fileObject" -}}
{{- $found := false -}}
{{- range (.root.Files.Get .file | splitList "\n---\n") -}}
{{- $obj := fromYaml . -}}
{{- if and (not $found) $obj (eq ($obj.kind | default "") $.kind) -}}
{{- $found = true -}}
{{- toYaml $obj -}}
{{- end -}}
{{- end -}}
{{- if not $found -}}
{{- fail (printf "%s holds no %s" .file .kind) -}}
{{- end -}}
{{- end -}}

{{/* The rules of a Role or ClusterRole in a file under files/, as YAML. */}}
{{- define "pdtopo.fileRules" -}}
{{- (include "pdtopo.fileObject" . | fromYaml).rules | toYaml -}}
{{- end -}}

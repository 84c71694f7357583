import * as r from '../schemas/resource-schemas';
import * as runs from '../schemas/run-schemas';
import { callerOf } from '../middleware/authenticate';
import { handoffAttachmentBody, reportArtifactBody } from '../schemas/run-request-schemas';
import { endpoint, json, type Endpoint } from './endpoint';

/** Harness support: called by a run's harness with the run-scoped key it was given; writes to that run only. */
export const harnessSupportEndpoints: Endpoint[] = [
  endpoint({
    method: 'post',
    path: '/harness-support/report-artifact',
    runScopedKey: true,
    tag: 'Harness support',
    summary: "Report an artifact of the caller's run (run-scoped key)",
    success: json(r.reportedArtifactSchema, 'The stored artifact.', 201),
    errors: [413],
    body: reportArtifactBody,
    handle: async ({ req, res, body, api }) => {
      const content =
        body.content_base64 === undefined ? undefined : Buffer.from(body.content_base64, 'base64');
      const view = await api.call(
        'artifacts',
        'ReportArtifact',
        {
          caller: callerOf(req),
          artifact_type: body.artifact_type,
          data_json: JSON.stringify(body.data),
          content: content ?? Buffer.alloc(0),
          has_content: content !== undefined,
          is_public: body.is_public ?? false,
          artifact_uid: body.artifact_uid ?? '',
        },
        req.id,
      );
      res.status(201).json({
        artifact_uid: view.artifact_uid,
        artifact_type: view.artifact_type,
        created_at: view.created_at,
        run_id: view.run_id,
        is_public: view.is_public,
        data: JSON.parse(view.data_json || '{}') as unknown,
      });
    },
  }),

  endpoint({
    method: 'post',
    path: '/harness-support/handoff-attachments',
    runScopedKey: true,
    tag: 'Harness support',
    summary: "Store a handoff snapshot file of the caller's current execution (run-scoped key)",
    success: json(runs.uploadedHandoffAttachmentSchema, 'Stored.', 201),
    errors: [413],
    body: handoffAttachmentBody,
    handle: async ({ req, res, body, api }) => {
      const stored = await api.call(
        'runs',
        'UploadHandoffAttachment',
        {
          caller: callerOf(req),
          filename: body.filename,
          mime_type: body.mime_type ?? '',
          data: Buffer.from(body.content_base64, 'base64'),
        },
        req.id,
      );
      res.status(201).json({
        attachment_id: stored.attachment_id,
        filename: stored.filename,
        ...(stored.mime_type ? { mime_type: stored.mime_type } : {}),
        execution: stored.execution,
        size_bytes: Number(stored.size_bytes),
      });
    },
  }),
];

/**
 * The runner's own calls to harness support (docs/artifacts.md), made from the runner process with the execution's
 * run-scoped key, for what the platform records about a run on its behalf (its workspace changes).
 */
export async function reportFileArtifact(
  run: { apiBaseUrl: string; runApiKey: string },
  file: { filepath: string; mimeType: string; title: string; description: string; content: Buffer },
): Promise<{ artifact_uid: string }> {
  const res = await fetch(`${run.apiBaseUrl}/harness-support/report-artifact`, {
    method: 'POST',
    headers: { authorization: `Bearer ${run.runApiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      artifact_type: 'FILE',
      data: {
        filepath: file.filepath,
        mime_type: file.mimeType,
        title: file.title,
        description: file.description,
      },
      content_base64: file.content.toString('base64'),
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await res.json().catch(() => ({}))) as { artifact_uid?: string; detail?: string };
  if (!res.ok || !body.artifact_uid)
    throw new Error(`reporting the artifact failed: ${res.status} ${body.detail ?? ''}`.trim());
  return { artifact_uid: body.artifact_uid };
}

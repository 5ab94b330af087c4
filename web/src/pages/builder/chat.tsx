import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';

import { callStream } from '../../api/client';
import { Button, ErrorNote, Section, TextArea } from '../../ui';
import { readEvents, type TurnEvent } from './sse';
import type { Session } from './types';
import { sessionPath } from './types';

/** The turn being streamed: the reply as the model writes it and each step (a file written…) as it happens. */
interface Live {
  turnId: string | null;
  prompt: string | null;
  text: string;
  steps: string[];
  error: string | null;
}

const str = (v: unknown) => (typeof v === 'string' ? v : String(v ?? ''));

function step(e: TurnEvent): string | undefined {
  const d = e.data;
  switch (e.event) {
    case 'file.write':
      return `Wrote ${str(d.path)} (${str(d.size)} bytes)`;
    case 'file.delete':
      return `Deleted ${str(d.path)}`;
    case 'file.rename':
      return `Renamed ${str(d.from)} to ${str(d.to)}`;
    case 'checkpoint.created':
      return `Checkpoint #${str(d.seq)} made (${str(d.files)} files)`;
    case 'sandbox.synced':
      return 'Preview updated';
    default:
      return undefined;
  }
}

/**
 * The conversation: earlier messages from the session, and the running turn followed by its event stream (the
 * message's own stream, or the turn's events route when the page opens on a turn already running).
 */
export function Chat({ session: s, canChange }: { session: Session; canChange: boolean }) {
  const client = useQueryClient();
  const [live, setLive] = useState<Live | null>(null);
  const [draft, setDraft] = useState('');
  const [error, setError] = useState<unknown>(null);
  const following = useRef<string | null>(null);

  async function follow(open: () => Promise<Response>, prompt: string | null) {
    setError(null);
    setLive({ turnId: null, prompt, text: '', steps: [], error: null });
    try {
      const res = await open();
      await readEvents(res, (e) => {
        setLive((l) => {
          if (!l) return l;
          if (e.event === 'turn.started') {
            // This page follows the turn already: a reread of the session that shows it running opens no second stream.
            following.current = str(e.data.turnId);
            return { ...l, turnId: str(e.data.turnId) };
          }
          if (e.event === 'message.delta') return { ...l, text: l.text + str(e.data.text) };
          if (e.event === 'error') return { ...l, error: str(e.data.message) };
          const line = step(e);
          return line ? { ...l, steps: [...l.steps, line] } : l;
        });
      });
    } catch (err) {
      setError(err);
    } finally {
      // The ended turn is in the session now (its message, checkpoint and files): read it once, then drop the stream.
      await client.invalidateQueries({ predicate: (q) => String(q.queryKey[0]).startsWith(sessionPath(s.id)) });
      setLive(null);
    }
  }

  // A turn already running when the page opened (another tab, or a reload): follow it from its first event.
  const running = s.runningTurn?.turnId;
  useEffect(() => {
    if (!running || following.current === running) return;
    following.current = running;
    void follow(() => callStream('GET', `${sessionPath(s.id)}/turns/${encodeURIComponent(running)}/events`), null);
  }, [running, s.id]);

  function send() {
    const content = draft.trim();
    if (!content) return;
    const idempotencyKey = `console-${crypto.randomUUID()}`;
    setDraft('');
    void follow(async () => {
      const res = await callStream('POST', `${sessionPath(s.id)}/messages/stream`, { content, idempotencyKey });
      return res;
    }, content);
  }

  const busy = live !== null;
  return (
    <Section title="Chat">
      <div className="builder-chat" role="log" aria-label="Conversation">
        <ol>
          {s.messages.length === 0 && !live && (
            <li className="muted">Describe the app you want; the model writes its files and tells you what it did.</li>
          )}
          {s.messages.map((m) => (
            <li key={m.id} className={`builder-msg builder-msg-${m.role}${m.reverted ? ' builder-msg-reverted' : ''}`}>
              <strong>{m.role === 'user' ? 'You' : 'Assistant'}</strong>
              {m.reverted && <span className="muted"> (reverted)</span>}
              <p>{m.content}</p>
              {m.error && <p className="error-note">{m.error.message}</p>}
            </li>
          ))}
          {live?.prompt && (
            <li className="builder-msg builder-msg-user">
              <strong>You</strong>
              <p>{live.prompt}</p>
            </li>
          )}
          {live && (
            <li className="builder-msg builder-msg-assistant" aria-busy="true">
              <strong>Assistant</strong> <span className="muted">(writing…)</span>
              {live.steps.length > 0 && (
                <ul className="builder-steps" aria-label="Steps of the turn">
                  {live.steps.map((t, i) => (
                    <li key={i}>{t}</li>
                  ))}
                </ul>
              )}
              <p data-testid="streamed-reply">{live.text}</p>
              {live.error && <p className="error-note">{live.error}</p>}
            </li>
          )}
        </ol>
      </div>
      <ErrorNote error={canChange ? null : error} />
      {canChange && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            send();
          }}
        >
          <TextArea
            label="Message"
            rows={3}
            value={draft}
            maxLength={32768}
            placeholder="Make a page that says hello"
            onChange={(e) => setDraft(e.target.value)}
          />
          <ErrorNote error={error} />
          <div className="form-actions">
            <Button type="submit" variant="primary" busy={busy} disabled={!draft.trim()}>
              Send
            </Button>
          </div>
        </form>
      )}
    </Section>
  );
}

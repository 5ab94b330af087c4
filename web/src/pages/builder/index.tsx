import { lazy, Suspense } from 'react';
import { Route, Routes } from 'react-router';

import { Loading } from '../../ui';
import { SessionsList } from './sessions';
import { SharedView } from './shared';

// The session page carries the editor (CodeMirror): its own chunk, loaded when a session is opened.
const SessionPage = lazy(() => import('./session'));

/** The AI builder: sessions of a project, a session (chat, files, preview, checkpoints), and shared checkpoints. */
export default function BuilderPage() {
  return (
    <Routes>
      <Route index element={<SessionsList />} />
      <Route path="shares/:slug" element={<SharedView />} />
      <Route
        path=":id"
        element={
          <Suspense fallback={<Loading what="Loading the session" />}>
            <SessionPage />
          </Suspense>
        }
      />
    </Routes>
  );
}

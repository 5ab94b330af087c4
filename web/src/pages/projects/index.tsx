import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function projectsPage() {
  return (
    <Page title="Projects">
      <p>This page is being built.</p>
    </Page>
  );
}

import { Page } from '../../ui';

/** Placeholder until this area's page is built. */
export default function usersPage() {
  return (
    <Page title="Users and roles">
      <p>This page is being built.</p>
    </Page>
  );
}

// The ACL token page: the token every request sends (kept in the
// browser's session storage, gone when the tab closes), and what it is.
import { html, useState, useRead, Loading, Facts, api } from '../ui.js';

/** /settings/tokens: set, see and clear the token. */
export function TokensPage() {
  const [secret, setSecret] = useState(api.token());
  const [saved, setSaved] = useState(api.token());
  const self = useRead(saved ? '/v1/acl/token/self' : null, {}, saved);
  return html`<h1>ACL tokens</h1>
    <p>Requests from this page send the token below as <code>X-Nomad-Token</code>. It is kept in this
      tab's session storage only.</p>
    <form class="token" onSubmit=${(e) => { e.preventDefault(); api.setToken(secret.trim()); setSaved(secret.trim()); }}>
      <label>Secret ID <input type="password" autocomplete="off" value=${secret} onInput=${(e) => setSecret(e.target.value)} /></label>
      <button type="submit">Set token</button>
      <button type="button" onClick=${() => { api.setToken(''); setSecret(''); setSaved(''); }}>Clear token</button>
    </form>
    ${saved ? html`<${Loading} state=${self} />
      ${self.data && html`<h2>Token</h2><${Facts} items=${[
        ['Name', self.data.Name], ['Accessor', self.data.AccessorID], ['Type', self.data.Type],
        ['Policies', (self.data.Policies || []).join(', ')], ['Roles', (self.data.Roles || []).map((r) => r.Name).join(', ')],
        ['Expires', self.data.ExpirationTime]]} />`}`
      : html`<p>No token set: requests are anonymous.</p>`}`;
}
TokensPage.title = 'ACL tokens';

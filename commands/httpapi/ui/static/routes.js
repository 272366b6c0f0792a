// The UI's pages by path (under /ui): each pattern's named groups are
// the page's props. Nomad's UI paths where Nomad has the page. A page's
// module is loaded when it is first shown, so the first screen waits for
// its own page only.

/** A loader of the page component name exported by module. */
function page(module, name) {
  return () => import(module).then((m) => m[name]);
}

/** [pattern, load] pairs, tried in order; load resolves to the page. */
export const routes = [
  [/^\/jobs$/, page('./pages/jobs.js', 'JobsPage')],
  [new RegExp(`^/jobs/(?<jobref>[^/]+)(?:/(?<tab>[a-z]+))?$`), page('./pages/jobs.js', 'JobPage')],
  [/^\/allocations$/, page('./pages/allocations.js', 'AllocationsPage')],
  [new RegExp(`^/allocations/(?<id>[^/]+)(?:/(?<tab>[a-z]+))?$`), page('./pages/allocations.js', 'AllocationPage')],
  [/^\/clients$/, page('./pages/clients.js', 'ClientsPage')],
  [new RegExp(`^/clients/(?<id>[^/]+)$`), page('./pages/clients.js', 'ClientPage')],
  [/^\/evaluations$/, page('./pages/evaluations.js', 'EvaluationsPage')],
  [new RegExp(`^/evaluations/(?<id>[^/]+)$`), page('./pages/evaluations.js', 'EvaluationPage')],
  [/^\/deployments$/, page('./pages/deployments.js', 'DeploymentsPage')],
  [new RegExp(`^/deployments/(?<id>[^/]+)$`), page('./pages/deployments.js', 'DeploymentPage')],
  [/^\/timeline$/, page('./pages/timeline.js', 'TimelinePage')],
  [new RegExp(`^/history/(?<kind>[a-z_]+)/(?<id>.+)$`), page('./pages/history.js', 'HistoryPage')],
  [/^\/namespaces$/, page('./pages/namespaces.js', 'NamespacesPage')],
  [/^\/variables$/, page('./pages/variables.js', 'VariablesPage')],
  [new RegExp(`^/variables/(?<path>.+)$`), page('./pages/variables.js', 'VariablePage')],
  [/^\/csi\/volumes$/, page('./pages/csi.js', 'VolumesPage')],
  [new RegExp(`^/csi/volumes/(?<id>[^/]+)$`), page('./pages/csi.js', 'VolumePage')],
  [/^\/launcher$/, page('./pages/launcher.js', 'LauncherPage')],
  [/^\/operator$/, page('./pages/operator.js', 'OperatorPage')],
  [/^\/settings\/tokens$/, page('./pages/tokens.js', 'TokensPage')],
];

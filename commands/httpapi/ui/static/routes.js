// The UI's pages by path (under /ui): each pattern's named groups are
// the page's props. Nomad's UI paths where Nomad has the page.
import { JobsPage, JobPage } from './pages/jobs.js';
import { AllocationsPage, AllocationPage } from './pages/allocations.js';
import { ClientsPage, ClientPage } from './pages/clients.js';
import { EvaluationsPage, EvaluationPage } from './pages/evaluations.js';
import { DeploymentsPage, DeploymentPage } from './pages/deployments.js';
import { TimelinePage } from './pages/timeline.js';
import { HistoryPage } from './pages/history.js';
import { NamespacesPage } from './pages/namespaces.js';
import { VariablesPage, VariablePage } from './pages/variables.js';
import { VolumesPage, VolumePage } from './pages/csi.js';
import { LauncherPage } from './pages/launcher.js';
import { OperatorPage } from './pages/operator.js';
import { TokensPage } from './pages/tokens.js';


/** [pattern, page] pairs, tried in order. */
export const routes = [
  [/^\/jobs$/, JobsPage],
  [new RegExp(`^/jobs/(?<jobref>[^/]+)(?:/(?<tab>[a-z]+))?$`), JobPage],
  [/^\/allocations$/, AllocationsPage],
  [new RegExp(`^/allocations/(?<id>[^/]+)(?:/(?<tab>[a-z]+))?$`), AllocationPage],
  [/^\/clients$/, ClientsPage],
  [new RegExp(`^/clients/(?<id>[^/]+)$`), ClientPage],
  [/^\/evaluations$/, EvaluationsPage],
  [new RegExp(`^/evaluations/(?<id>[^/]+)$`), EvaluationPage],
  [/^\/deployments$/, DeploymentsPage],
  [new RegExp(`^/deployments/(?<id>[^/]+)$`), DeploymentPage],
  [/^\/timeline$/, TimelinePage],
  [new RegExp(`^/history/(?<kind>[a-z_]+)/(?<id>.+)$`), HistoryPage],
  [/^\/namespaces$/, NamespacesPage],
  [/^\/variables$/, VariablesPage],
  [new RegExp(`^/variables/(?<path>.+)$`), VariablePage],
  [/^\/csi\/volumes$/, VolumesPage],
  [new RegExp(`^/csi/volumes/(?<id>[^/]+)$`), VolumePage],
  [/^\/launcher$/, LauncherPage],
  [/^\/operator$/, OperatorPage],
  [/^\/settings\/tokens$/, TokensPage],
];

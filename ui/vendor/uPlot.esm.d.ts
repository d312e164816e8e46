// Types of the chart library the server serves at ui/vendor/uPlot.esm.js (from node_modules/uplot), for ui/tsconfig.json.
import uPlot from 'uplot';
export default uPlot;

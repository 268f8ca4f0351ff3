// The page's wiring: it loads the simulator (sim.wasm, headroom's engines
// compiled to WebAssembly), builds each panel's controls from what the
// simulator offers, advances the runs frame by frame, and draws what they
// report. Every figure on the page comes from the WebAssembly; this file
// only draws and wires.
'use strict';

(() => {
  const SVG = 'http://www.w3.org/2000/svg';
  // The chart's colours: one a line, instances first.
  const INSTANCE_COLOURS = ['#0066cc', '#cc6600', '#9933cc', '#009999', '#996633', '#cc3399'];
  // The world's controls, named as the command's flags and page.World's
  // fields; options name the catalog's list a select offers.
  const WORLD_FIELDS = [
    { name: 'instances', label: 'Instances', min: 1, max: 1000, step: 1 },
    { name: 'demand', label: 'Demand of each, units a minute', min: 1, step: 'any' },
    { name: 'quota', label: 'Hidden quota, units per window', min: 1, step: 1 },
    { name: 'scenario', label: 'Scenario', options: 'scenarios' },
    { name: 'server', label: 'Server', options: 'serverKinds' },
    { name: 'window', label: 'Window, seconds', min: 1, max: 86400, step: 1 },
    { name: 'burst', label: 'Burst, units (0: the kind’s default)', min: 0, step: 1, buckets: true },
    { name: 'publish', label: 'Headers published', options: 'publishes' },
    { name: 'duration', label: 'Length of the run, seconds', min: 1, max: 86400, step: 1 },
    { name: 'seed', label: 'Seed', min: 1, step: 1 },
  ];

  let catalog = null;
  let firstChart = false;
  const reduceMotion = window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches;

  // call runs one of the simulator's functions with JSON arguments and
  // returns its answer, throwing the error it reports.
  function call(name, ...args) {
    const out = JSON.parse(window.headroomSim[name](...args));
    if (out && typeof out === 'object' && typeof out.error === 'string') {
      throw new Error(out.error);
    }
    return out;
  }

  // loadSimulator instantiates the simulator that the page's head began
  // to fetch and compile (window.simModule), and runs it.
  async function loadSimulator() {
    const go = new Go();
    const ready = new Promise((resolve) => { window.headroomSimReady = resolve; });
    let module;
    try {
      module = await window.simModule;
    } catch (e) {
      // A host that serves .wasm under another type: compile from bytes.
      module = await WebAssembly.compile(await (await fetch('sim.wasm')).arrayBuffer());
    }
    const instance = await WebAssembly.instantiate(module, go.importObject);
    performance.mark('simulator-compiled');
    go.run(instance);
    await ready;
    performance.mark('simulator-ready');
  }

  // nextFrame resolves once the browser has drawn a frame.
  function nextFrame() {
    return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== undefined && v !== null) e.setAttribute(k, v);
    }
    for (const c of children) e.append(c);
    return e;
  }

  function svgEl(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }

  let uid = 0;
  function nextId(prefix) { uid += 1; return `${prefix}-${uid}`; }

  // numberField and selectField build one labelled control.
  function numberField(name, label, attrs, help) {
    const id = nextId(name);
    const input = el('input', { id, name, type: 'number', inputmode: 'decimal', ...attrs });
    const wrap = el('div', { class: 'field' }, el('label', { for: id }, label), input);
    if (help) {
      const hid = nextId('help');
      wrap.append(el('small', { id: hid }, help));
      input.setAttribute('aria-describedby', hid);
    }
    return wrap;
  }

  function selectField(name, label, values) {
    const id = nextId(name);
    const select = el('select', { id, name });
    for (const v of values) select.append(el('option', { value: v }, v));
    return el('div', { class: 'field' }, el('label', { for: id }, label), select);
  }

  function worldFields(container) {
    for (const f of WORLD_FIELDS) {
      const field = f.options
        ? selectField(f.name, f.label, catalog[f.options])
        : numberField(f.name, f.label, { min: f.min, max: f.max, step: f.step });
      if (f.buckets) field.classList.add('buckets-only');
      container.append(field);
    }
  }

  function readWorld(form) {
    const w = {};
    for (const f of WORLD_FIELDS) {
      const v = form.elements[f.name].value;
      w[f.name] = f.options ? v : Number(v);
    }
    return w;
  }

  function writeWorld(form, w) {
    for (const f of WORLD_FIELDS) {
      form.elements[f.name].value = w[f.name];
    }
    showBurst(form);
  }

  // showBurst shows the burst only for a kind of server with a bucket.
  function showBurst(form) {
    const bucket = catalog.bursts.includes(form.elements.server.value);
    const field = form.querySelector('.buckets-only');
    field.hidden = !bucket;
  }

  // A Chart draws a live run: the rates against the quota and the accepted
  // units, and below them the 429s and the queue.
  class Chart {
    constructor(rates, throttles) {
      this.rates = rates;
      this.throttles = throttles;
    }

    draw(points, end, quota) {
      this.drawRates(points, end, quota || 1);
      this.drawThrottles(points, end);
    }

    drawRates(points, end, quota) {
      const svg = this.rates;
      const w = Math.max(svg.clientWidth || 640, 200);
      const h = 240;
      const m = { l: 52, r: 10, t: 10, b: 24 };
      svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
      svg.replaceChildren();
      let maxQuota = quota;
      let maxValue = 1;
      for (const p of points) {
        maxQuota = Math.max(maxQuota, p.quota);
        maxValue = Math.max(maxValue, p.rate, p.accepted);
      }
      const top = niceCeil(Math.max(maxQuota * 1.25, Math.min(maxValue * 1.05, maxQuota * 3)));
      const x = (t) => m.l + (t / end) * (w - m.l - m.r);
      const y = (v) => m.t + (1 - Math.min(v, top * 1.02) / top) * (h - m.t - m.b);
      axes(svg, w, h, m, end, top, y, x);
      const clip = nextId('clip');
      const defs = svgEl('defs');
      const cp = svgEl('clipPath', { id: clip });
      cp.append(svgEl('rect', { x: m.l, y: m.t, width: w - m.l - m.r, height: h - m.t - m.b }));
      defs.append(cp);
      svg.append(defs);
      const g = svgEl('g', { 'clip-path': `url(#${clip})` });
      svg.append(g);
      if (points.length === 0) return;
      const line = (f) => points.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(f(p)).toFixed(1)}`).join('');
      const area = `${line((p) => p.accepted)}L${x(points[points.length - 1].t).toFixed(1)},${y(0)}L${x(points[0].t).toFixed(1)},${y(0)}Z`;
      g.append(svgEl('path', { d: area, class: 'accepted-area' }));
      g.append(svgEl('path', { d: line((p) => p.accepted), class: 'accepted' }));
      g.append(svgEl('path', { d: stepLine(points, x, y), class: 'quota' }));
      const n = points.reduce((k, p) => Math.max(k, p.rates ? p.rates.length : 0), 0);
      for (let i = 0; i < n && n > 1; i++) {
        const own = points.filter((p) => p.rates && p.rates.length > i);
        if (own.length === 0) continue;
        const d = own.map((p, j) => `${j ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.rates[i]).toFixed(1)}`).join('');
        g.append(svgEl('path', { d, class: 'instance', stroke: INSTANCE_COLOURS[i % INSTANCE_COLOURS.length] }));
      }
      g.append(svgEl('path', { d: line((p) => p.rate), class: 'rate' }));
    }

    drawThrottles(points, end) {
      const svg = this.throttles;
      const w = Math.max(svg.clientWidth || 640, 200);
      const h = 90;
      const m = { l: 52, r: 10, t: 16, b: 4 };
      svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
      svg.replaceChildren();
      let maxThrottled = 0;
      let maxQueued = 0;
      for (const p of points) {
        maxThrottled = Math.max(maxThrottled, p.throttled);
        maxQueued = Math.max(maxQueued, p.queued);
      }
      const tTop = niceCeil(Math.max(maxThrottled, 1));
      const qTop = niceCeil(Math.max(maxQueued, 1));
      const x = (t) => m.l + (t / end) * (w - m.l - m.r);
      const yT = (v) => m.t + (1 - v / tTop) * (h - m.t - m.b);
      const yQ = (v) => m.t + (1 - v / qTop) * (h - m.t - m.b);
      svg.append(svgEl('rect', { x: m.l, y: m.t, width: w - m.l - m.r, height: h - m.t - m.b, class: 'frame' }));
      text(svg, m.l, m.t - 4, `429s a second, to ${fmt(tTop)}`, 'start', 'axis throttled-label');
      text(svg, w - m.r, m.t - 4, `in queue, to ${fmt(qTop)}`, 'end', 'axis queued-label');
      const bar = Math.max((w - m.l - m.r) / Math.max(end, 1), 1);
      let d = '';
      for (const p of points) {
        if (p.throttled > 0) {
          d += `M${x(p.t - 1).toFixed(1)},${yT(0).toFixed(1)}h${bar.toFixed(1)}V${yT(p.throttled).toFixed(1)}h${(-bar).toFixed(1)}Z`;
        }
      }
      svg.append(svgEl('path', { d, class: 'throttled' }));
      if (points.length > 0) {
        const q = points.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${yQ(p.queued).toFixed(1)}`).join('');
        svg.append(svgEl('path', { d: q, class: 'queued' }));
      }
    }
  }

  function stepLine(points, x, y) {
    let d = '';
    points.forEach((p, i) => {
      d += i ? `H${x(p.t).toFixed(1)}V${y(p.quota).toFixed(1)}` : `M${x(p.t).toFixed(1)},${y(p.quota).toFixed(1)}`;
    });
    return d;
  }

  function axes(svg, w, h, m, end, top, y, x) {
    svg.append(svgEl('rect', { x: m.l, y: m.t, width: w - m.l - m.r, height: h - m.t - m.b, class: 'frame' }));
    for (let i = 0; i <= 4; i++) {
      const v = (top / 4) * i;
      svg.append(svgEl('line', { x1: m.l, x2: w - m.r, y1: y(v), y2: y(v), class: 'grid' }));
      text(svg, m.l - 6, y(v) + 4, top < 10 ? v.toFixed(1) : fmt(v), 'end', 'axis');
    }
    const minutes = end / 60;
    const every = minutes <= 3 ? 0.5 : minutes <= 20 ? (minutes <= 10 ? 1 : 2) : Math.ceil(minutes / 10);
    for (let t = 0; t <= end + 1e-9; t += every * 60) {
      svg.append(svgEl('line', { x1: x(t), x2: x(t), y1: h - m.b, y2: h - m.b + 4, class: 'tick' }));
      text(svg, x(t), h - 6, clockLabel(t), 'middle', 'axis');
    }
  }

  function clockLabel(t) {
    const s = Math.round(t);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  }

  function text(svg, x, y, s, anchor, cls) {
    const t = svgEl('text', { x, y, 'text-anchor': anchor, class: cls });
    t.textContent = s;
    svg.append(t);
  }

  function niceCeil(v) {
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const k of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
      if (k * p >= v) return k * p;
    }
    return 10 * p;
  }

  function fmt(v) { return Math.round(v).toLocaleString('en-US'); }

  function legend(list, instances) {
    list.replaceChildren();
    const item = (cls, label, colour) => {
      const sw = el('span', { class: `swatch ${cls}`, 'aria-hidden': 'true' });
      if (colour) sw.style.background = colour;
      list.append(el('li', {}, sw, label));
    };
    if (instances > 1) {
      for (let i = 0; i < instances; i++) item('instance', `instance ${i + 1}`, INSTANCE_COLOURS[i % INSTANCE_COLOURS.length]);
    }
    item('rate', 'sum of the rates');
    item('quota', 'hidden quota, a minute');
    item('accepted', 'accepted, last 60 s');
    item('throttled', '429s a second');
    item('queued', 'in queue');
  }

  // A Panel is one simulator: its controls, its run, its tiles and chart.
  class Panel {
    constructor(root, section) {
      this.root = root;
      this.section = section;
      this.base = {
        mode: root.dataset.mode,
        world: { ...catalog.defaults, ...JSON.parse(root.dataset.world || '{}') },
        options: {},
      };
      root.append(document.getElementById('panel-template').content.cloneNode(true));
      this.form = root.querySelector('form');
      this.chart = new Chart(root.querySelector('svg.rates'), root.querySelector('svg.throttles'));
      this.playing = false;
      this.visible = false;
      this.started = false;
      this.id = 0;
      this.points = [];
      this.frame = null;
      this.buildControls();
      this.wire();
      this.apply(this.base);
      this.reset();
    }

    buildControls() {
      const modes = this.form.elements.mode;
      for (const m of catalog.modes) modes.append(el('option', { value: m.name }, m.name));
      worldFields(this.form.querySelector('.world-fields'));
      const head = this.root.querySelector('.numbers thead');
      const tr = el('tr');
      for (const h of catalog.rowHeader) {
        tr.append(el('th', { scope: 'col' }, h));
      }
      head.append(tr);
    }

    // optionFields builds the chosen mode's options, its controller's in
    // view and the others under "More options".
    optionFields(mode, values) {
      const main = this.form.querySelector('.options-main');
      const more = this.form.querySelector('.options-more');
      main.replaceChildren();
      more.replaceChildren();
      const info = catalog.modes.find((m) => m.name === mode);
      const settings = (info && info.settings) || [];
      for (const s of settings) {
        const label = s.Unit ? `${s.Name}, ${s.Unit}` : s.Name;
        const f = numberField(`opt-${s.Name}`, label, { min: s.Min, max: s.Max, step: s.Whole ? 1 : 'any', 'data-option': s.Name, 'data-default': s.Default }, s.Help);
        f.querySelector('input').value = s.Name in values ? values[s.Name] : s.Default;
        (s.Group === 'limiter' ? more : main).append(f);
      }
      this.form.querySelector('.more').hidden = more.children.length === 0;
    }

    wire() {
      this.root.querySelector('.play').addEventListener('click', () => (this.playing ? this.pause() : this.play()));
      this.root.querySelector('.reset').addEventListener('click', () => { this.reset(); this.play(); });
      this.speedSelect = this.root.querySelector('.speed-select');
      this.form.addEventListener('change', (e) => {
        if (e.target.name === 'mode') this.optionFields(e.target.value, {});
        if (e.target.name === 'server') showBurst(this.form);
        this.restart();
      });
      this.form.addEventListener('submit', (e) => e.preventDefault());
      for (const b of this.section.querySelectorAll('.try button[data-try]')) {
        b.addEventListener('click', () => this.tryThis(b));
      }
    }

    // settings reads the controls: the world, the mode, and the options
    // that differ from their defaults.
    settings() {
      const options = {};
      for (const input of this.form.querySelectorAll('[data-option]')) {
        const v = Number(input.value);
        if (input.value === '' || v !== Number(input.dataset.default)) options[input.dataset.option] = v;
      }
      return { ...readWorld(this.form), mode: this.form.elements.mode.value, options };
    }

    apply(s) {
      this.form.elements.mode.value = s.mode;
      this.optionFields(s.mode, s.options || {});
      writeWorld(this.form, s.world);
    }

    tryThis(button) {
      const t = JSON.parse(button.dataset.try);
      this.apply({
        mode: t.mode || this.base.mode,
        world: { ...this.base.world, ...(t.world || {}) },
        options: t.options || {},
      });
      if (t.speed) this.speedSelect.value = t.speed;
      const watch = button.parentElement.querySelector('.watch');
      this.root.querySelector('.watch-now').textContent = `${button.textContent}: ${watch ? watch.textContent : ''}`;
      this.reset();
      this.play();
    }

    restart() {
      const playing = this.playing;
      this.reset();
      if (playing) this.play();
    }

    reset() {
      const error = this.root.querySelector('.error');
      if (this.id) call('stop', this.id);
      this.id = 0;
      this.frame = null;
      this.points = [];
      this.target = 0;
      this.root.querySelector('.numbers tbody').replaceChildren();
      this.pause();
      const settings = this.settings();
      this.root.dataset.settings = JSON.stringify(settings);
      try {
        this.id = call('start', JSON.stringify(settings)).id;
      } catch (e) {
        // Settings the simulator refuses: say why, and show no figures.
        error.textContent = e.message;
        this.form.setAttribute('aria-invalid', 'true');
        this.root.dataset.state = 'invalid';
        for (const v of this.root.querySelectorAll('.tile-value')) v.textContent = '–';
        this.chart.draw([], 1);
        return;
      }
      error.textContent = '';
      this.form.removeAttribute('aria-invalid');
      this.root.dataset.state = 'ready';
      this.refresh();
    }

    play() {
      if (this.frame && this.frame.done) this.reset();
      if (!this.id) return;
      this.playing = true;
      this.started = true;
      this.root.dataset.state = 'running';
      const b = this.root.querySelector('.play');
      b.textContent = 'Pause';
      b.setAttribute('aria-pressed', 'true');
    }

    pause() {
      this.playing = false;
      if (this.root.dataset.state === 'running') this.root.dataset.state = 'paused';
      const b = this.root.querySelector('.play');
      b.textContent = 'Start';
      b.setAttribute('aria-pressed', 'false');
    }

    // tick advances the run by the real time elapsed at the chosen speed,
    // or, as fast as it goes, for a slice of the frame.
    tick(elapsedMs) {
      if (!this.playing || !this.visible || !this.frame) return;
      const end = this.frame.end;
      const speed = this.speedSelect.value;
      if (speed === 'max') {
        const start = performance.now();
        do {
          this.target = Math.min(end, this.target + 5);
          call('advance', this.id, this.target);
        } while (this.target < end && performance.now() - start < 12);
      } else {
        this.target = Math.min(end, this.target + (elapsedMs / 1000) * Number(speed));
        call('advance', this.id, this.target);
      }
      this.refresh();
    }

    refresh() {
      const f = call('frame', this.id, this.points.length);
      this.frame = f;
      for (const p of f.points) this.points.push(p);
      this.render(f);
      if (f.done) {
        this.pause();
        this.root.dataset.state = f.runError ? 'error' : 'done';
      }
    }

    render(f) {
      this.root.querySelector('.clock').textContent = f.clock;
      const tiles = this.root.querySelector('.tiles');
      if (tiles.children.length !== f.tiles.length) {
        tiles.replaceChildren(...f.tiles.map((t) => el('li', { class: 'tile', 'data-tile': t.name, title: t.help },
          el('span', { class: 'tile-name' }, t.name), el('span', { class: 'tile-value' }, t.value))));
      }
      f.tiles.forEach((t, i) => { tiles.children[i].querySelector('.tile-value').textContent = t.value; });
      this.root.dataset.flags = JSON.stringify(f.flags);
      this.root.dataset.now = f.now;
      this.root.querySelector('.command code').textContent = f.command;
      if (f.runError) this.root.querySelector('.error').textContent = f.runError;
      const instances = this.points.reduce((k, p) => Math.max(k, p.rates ? p.rates.length : 0), 0);
      if (instances !== this.legendFor) {
        legend(this.root.querySelector('.legend'), instances);
        this.legendFor = instances;
      }
      this.chart.draw(this.points, f.end, f.quota);
      this.root.querySelector('.summary').textContent = f.summary;
      this.root.querySelector('svg.rates').setAttribute('aria-label', f.summary || 'The chart, before the run starts.');
      this.root.querySelector('svg.throttles').setAttribute('aria-label', '429s a second and requests in queue over the run.');
      const body = this.root.querySelector('.numbers tbody');
      for (const p of f.points) {
        if (p.row) body.append(el('tr', {}, ...p.row.map((c, i) => el(i ? 'td' : 'th', i ? {} : { scope: 'row' }, c))));
      }
      if (!firstChart) {
        // Marked as the frame that shows the first chart is drawn.
        firstChart = true;
        requestAnimationFrame(() => performance.mark('first-chart'));
      }
    }
  }

  // Comparison runs every mode on one world, a mode a frame, and shows the
  // command's table with a small chart for each.
  class Comparison {
    constructor(root) {
      this.root = root;
      const form = el('form', { class: 'controls', novalidate: '' });
      const world = el('fieldset', { class: 'world-fields' }, el('legend', {}, 'The clients and the server'));
      form.append(world);
      worldFields(world);
      const modes = el('fieldset', { class: 'mode-list' }, el('legend', {}, 'Modes'));
      for (const m of catalog.modes) {
        const id = nextId('compare-mode');
        modes.append(el('div', { class: 'check' }, el('input', { type: 'checkbox', id, name: 'modes', value: m.name, checked: '' }), el('label', { for: id }, m.name)));
      }
      form.append(modes);
      this.runButton = el('button', { type: 'submit', class: 'run' }, 'Run the comparison');
      form.append(el('div', { class: 'bar' }, this.runButton));
      this.form = form;
      this.command = el('p', { class: 'command' }, 'The same table from the command line: ', el('code'));
      this.table = el('table', { class: 'comparison-table' }, el('caption'), el('thead'), el('tbody'));
      this.note = el('p', { class: 'note' });
      this.footer = el('p', { class: 'footer' });
      this.error = el('p', { class: 'error', role: 'alert' });
      this.progress = el('p', { class: 'progress', role: 'status' });
      this.charts = el('div', { class: 'small-charts' });
      const results = el('div', { class: 'results' }, el('div', { class: 'scroll' }, this.table), this.note, this.footer, this.command, this.charts);
      root.append(form, this.progress, this.error, results);
      writeWorld(form, catalog.defaults);
      form.addEventListener('change', (e) => { if (e.target.name === 'server') showBurst(form); });
      form.addEventListener('submit', (e) => { e.preventDefault(); this.run(); });
      root.dataset.state = 'idle';
    }

    async run() {
      if (this.running) return;
      const world = readWorld(this.form);
      const modes = [...this.form.querySelectorAll('input[name=modes]:checked')].map((i) => i.value);
      this.error.textContent = '';
      let head;
      try {
        head = call('compare', JSON.stringify(world), JSON.stringify(modes));
      } catch (e) {
        this.error.textContent = e.message;
        this.root.dataset.state = 'invalid';
        return;
      }
      this.running = true;
      this.runButton.disabled = true;
      this.root.dataset.state = 'running';
      this.root.dataset.flags = JSON.stringify(head.flags);
      this.command.querySelector('code').textContent = head.command;
      this.table.querySelector('caption').textContent = head.title;
      const tr = el('tr');
      for (const h of head.header) tr.append(el('th', { scope: 'col' }, h));
      this.table.querySelector('thead').replaceChildren(tr);
      const body = this.table.querySelector('tbody');
      body.replaceChildren();
      this.charts.replaceChildren();
      this.note.textContent = '';
      this.footer.textContent = head.footer;
      try {
        for (const [i, mode] of head.modes.entries()) {
          this.progress.textContent = `Running ${mode} (${i + 1} of ${head.modes.length})…`;
          await new Promise((r) => setTimeout(r, 0));
          const row = call('compareMode', JSON.stringify(world), mode);
          body.append(el('tr', {}, ...row.row.map((c, j) => el(j ? 'td' : 'th', j ? {} : { scope: 'row' }, c))));
          if (row.note) this.note.textContent = row.note;
          this.smallChart(mode, row, head.header);
        }
        this.progress.textContent = `Done: ${head.modes.length} modes.`;
        this.root.dataset.state = 'done';
      } catch (e) {
        this.error.textContent = e.message;
        this.root.dataset.state = 'error';
      } finally {
        this.running = false;
        this.runButton.disabled = false;
      }
    }

    smallChart(mode, row, header) {
      const w = 300;
      const h = 110;
      const svg = svgEl('svg', { viewBox: `0 0 ${w} ${h}`, role: 'img', class: 'small' });
      const n = row.rate.length;
      let top = 1;
      for (let i = 0; i < n; i++) top = Math.max(top, row.quota[i] * 1.25, Math.min(Math.max(row.rate[i], row.accepted[i]), row.quota[i] * 3));
      top = niceCeil(top);
      const x = (i) => 4 + (i / Math.max(n - 1, 1)) * (w - 8);
      const y = (v) => 4 + (1 - Math.min(v, top) / top) * (h - 8);
      svg.append(svgEl('rect', { x: 4, y: 4, width: w - 8, height: h - 8, class: 'frame' }));
      const path = (vals, cls) => svg.append(svgEl('path', { d: vals.map((v, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(''), class: cls }));
      path(row.accepted, 'accepted');
      path(row.quota, 'quota');
      path(row.rate, 'rate');
      const words = header.map((hd, i) => `${hd} ${row.row[i]}`).slice(1).join(', ');
      svg.setAttribute('aria-label', `${mode}: the sum of the rates, the units accepted over the last 60 s and the quota over the run. ${words}.`);
      const fig = el('figure', {}, svg, el('figcaption', {}, el('strong', {}, mode), ` — ${words}`));
      this.charts.append(fig);
    }
  }

  async function main() {
    const status = document.getElementById('status');
    if ('serviceWorker' in navigator) {
      navigator.serviceWorker.register('sw.js').catch((e) => console.warn('offline copy unavailable:', e.message));
    }
    try {
      await loadSimulator();
    } catch (e) {
      status.textContent = `The simulator did not load: ${e.message}`;
      throw e;
    }
    catalog = call('catalog');
    performance.mark('catalog');
    const panels = [];
    for (const root of document.querySelectorAll('.sim')) {
      panels.push(new Panel(root, root.closest('section')));
      await nextFrame(); // the first chart on screen before the next panel is built
    }
    const comparison = new Comparison(document.querySelector('.comparison'));
    status.textContent = 'The simulator runs in your browser; once loaded, this page works offline too.';
    document.body.dataset.ready = 'true';

    const seen = new IntersectionObserver((entries) => {
      for (const e of entries) {
        const panel = panels.find((p) => p.root === e.target);
        if (panel) {
          panel.visible = e.isIntersecting;
          if (e.isIntersecting && !panel.started && !reduceMotion) panel.play();
        } else if (e.isIntersecting && comparison.root.dataset.state === 'idle') {
          comparison.run();
        }
      }
    }, { threshold: 0.2 });
    for (const p of panels) seen.observe(p.root);
    seen.observe(comparison.root);

    let last = performance.now();
    const loop = (now) => {
      const elapsed = Math.min(now - last, 250);
      last = now;
      for (const p of panels) p.tick(elapsed);
      requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);
    let resized = 0;
    window.addEventListener('resize', () => {
      cancelAnimationFrame(resized);
      resized = requestAnimationFrame(() => {
        for (const p of panels) if (p.frame) p.chart.draw(p.points, p.frame.end, p.frame.quota);
      });
    });
  }

  main();
})();

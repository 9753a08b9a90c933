/*!
 * Inventory console: the demo's versioned script (served as /assets/app-v1.js; v2 is this file
 * with a small edit, see examples/demo/assets.rs). Plain ES2020, no build step, no framework.
 */
(function (global) {
  'use strict';

  var APP_VERSION = '1.4.0';
  var API_BASE = '/api';
  var PAGE_SIZE = 25;
  var MAX_RETRIES = 3;
  var RETRY_BASE_MS = 250;
  var STORAGE_KEY = 'inventory-console:prefs';

  // ---------------------------------------------------------------------------------------
  // Small utilities

  function noop() {}

  function isObject(value) {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  }

  function clamp(value, min, max) {
    return Math.min(max, Math.max(min, value));
  }

  function debounce(fn, wait) {
    var timer = null;
    return function () {
      var self = this, args = arguments;
      if (timer) clearTimeout(timer);
      timer = setTimeout(function () {
        timer = null;
        fn.apply(self, args);
      }, wait);
    };
  }

  function throttle(fn, wait) {
    var last = 0, pending = null;
    return function () {
      var self = this, args = arguments, now = Date.now();
      var remaining = wait - (now - last);
      if (remaining <= 0) {
        last = now;
        fn.apply(self, args);
      } else if (!pending) {
        pending = setTimeout(function () {
          pending = null;
          last = Date.now();
          fn.apply(self, args);
        }, remaining);
      }
    };
  }

  function escapeHtml(text) {
    return String(text)
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&#39;');
  }

  function deepEqual(a, b) {
    if (a === b) return true;
    if (typeof a !== typeof b || a === null || b === null) return false;
    if (Array.isArray(a)) {
      if (!Array.isArray(b) || a.length !== b.length) return false;
      for (var i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
      return true;
    }
    if (isObject(a)) {
      var ka = Object.keys(a), kb = Object.keys(b);
      if (ka.length !== kb.length) return false;
      return ka.every(function (k) { return deepEqual(a[k], b[k]); });
    }
    return false;
  }

  function pick(obj, keys) {
    var out = {};
    keys.forEach(function (k) { if (k in obj) out[k] = obj[k]; });
    return out;
  }

  function groupBy(list, keyFn) {
    return list.reduce(function (acc, item) {
      var key = keyFn(item);
      (acc[key] || (acc[key] = [])).push(item);
      return acc;
    }, {});
  }

  function sortBy(list, key, direction) {
    var sign = direction === 'desc' ? -1 : 1;
    return list.slice().sort(function (a, b) {
      var x = a[key], y = b[key];
      if (x === y) return 0;
      if (x === undefined || x === null) return 1;
      if (y === undefined || y === null) return -1;
      return (x < y ? -1 : 1) * sign;
    });
  }

  function uid(prefix) {
    uid.counter = (uid.counter || 0) + 1;
    return (prefix || 'id') + '-' + uid.counter.toString(36);
  }

  // ---------------------------------------------------------------------------------------
  // Formatting

  var numberFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
  var moneyFormat = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'EUR' });
  var percentFormat = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });

  function formatBytes(bytes) {
    if (bytes == null || isNaN(bytes)) return 'n/a';
    if (bytes < 1024) return bytes + ' B';
    var units = ['KiB', 'MiB', 'GiB', 'TiB'];
    var value = bytes, unit = -1;
    do {
      value /= 1024;
      unit++;
    } while (value >= 1024 && unit < units.length - 1);
    return value.toFixed(value < 10 ? 2 : 1) + ' ' + units[unit];
  }

  function formatDuration(ms) {
    if (ms < 1) return (ms * 1000).toFixed(0) + ' µs';
    if (ms < 1000) return ms.toFixed(ms < 10 ? 1 : 0) + ' ms';
    var s = ms / 1000;
    if (s < 60) return s.toFixed(1) + ' s';
    var m = Math.floor(s / 60);
    return m + ' min ' + Math.round(s - m * 60) + ' s';
  }

  function formatRelative(date, now) {
    var diff = ((now || Date.now()) - date.getTime()) / 1000;
    if (diff < 5) return 'just now';
    if (diff < 60) return Math.floor(diff) + ' s ago';
    if (diff < 3600) return Math.floor(diff / 60) + ' min ago';
    if (diff < 86400) return Math.floor(diff / 3600) + ' h ago';
    return date.toLocaleDateString();
  }

  function formatPrice(value) {
    return moneyFormat.format(value);
  }

  function formatCount(value) {
    return numberFormat.format(value);
  }

  function formatRatio(part, whole) {
    return whole ? percentFormat.format(part / whole) : 'n/a';
  }

  // ---------------------------------------------------------------------------------------
  // Messages

  var MESSAGES = {
    en: {
      'app.title': 'Inventory console',
      'app.loading': 'Loading…',
      'app.offline': 'You are offline. Changes will be sent when the connection returns.',
      'items.empty': 'No items match these filters.',
      'items.count': '{count} items',
      'items.in_stock': 'In stock',
      'items.out_of_stock': 'Out of stock',
      'items.price': 'Price',
      'items.name': 'Name',
      'items.sku': 'SKU',
      'items.tags': 'Tags',
      'filter.search': 'Search by name or SKU',
      'filter.tag': 'Tag',
      'filter.all_tags': 'All tags',
      'filter.stock_only': 'In stock only',
      'pager.previous': 'Previous',
      'pager.next': 'Next',
      'pager.page': 'Page {page} of {pages}',
      'error.network': 'The server could not be reached ({status}).',
      'error.retry': 'Retry',
      'toast.saved': 'Saved.',
      'toast.copied': 'Copied to the clipboard.',
      'modal.close': 'Close',
      'stats.wire': 'On the wire',
      'stats.decoded': 'Decoded',
    },
    de: {
      'app.title': 'Lagerkonsole',
      'app.loading': 'Wird geladen…',
      'app.offline': 'Sie sind offline. Änderungen werden gesendet, sobald die Verbindung zurück ist.',
      'items.empty': 'Keine Artikel passen zu diesen Filtern.',
      'items.count': '{count} Artikel',
      'items.in_stock': 'Auf Lager',
      'items.out_of_stock': 'Nicht auf Lager',
      'items.price': 'Preis',
      'items.name': 'Name',
      'items.sku': 'Artikelnummer',
      'items.tags': 'Schlagwörter',
      'filter.search': 'Nach Name oder Artikelnummer suchen',
      'filter.tag': 'Schlagwort',
      'filter.all_tags': 'Alle Schlagwörter',
      'filter.stock_only': 'Nur auf Lager',
      'pager.previous': 'Zurück',
      'pager.next': 'Weiter',
      'pager.page': 'Seite {page} von {pages}',
      'error.network': 'Der Server ist nicht erreichbar ({status}).',
      'error.retry': 'Erneut versuchen',
      'toast.saved': 'Gespeichert.',
      'toast.copied': 'In die Zwischenablage kopiert.',
      'modal.close': 'Schließen',
      'stats.wire': 'Übertragen',
      'stats.decoded': 'Dekodiert',
    },
    fr: {
      'app.title': 'Console d\u2019inventaire',
      'app.loading': 'Chargement…',
      'app.offline': 'Vous êtes hors ligne. Les modifications seront envoyées au retour de la connexion.',
      'items.empty': 'Aucun article ne correspond à ces filtres.',
      'items.count': '{count} articles',
      'items.in_stock': 'En stock',
      'items.out_of_stock': 'Épuisé',
      'items.price': 'Prix',
      'items.name': 'Nom',
      'items.sku': 'Référence',
      'items.tags': 'Étiquettes',
      'filter.search': 'Chercher par nom ou référence',
      'filter.tag': 'Étiquette',
      'filter.all_tags': 'Toutes les étiquettes',
      'filter.stock_only': 'En stock seulement',
      'pager.previous': 'Précédent',
      'pager.next': 'Suivant',
      'pager.page': 'Page {page} sur {pages}',
      'error.network': 'Le serveur est injoignable ({status}).',
      'error.retry': 'Réessayer',
      'toast.saved': 'Enregistré.',
      'toast.copied': 'Copié dans le presse-papiers.',
      'modal.close': 'Fermer',
      'stats.wire': 'Transféré',
      'stats.decoded': 'Décodé',
    },
  };

  function createTranslator(locale) {
    var lang = (locale || 'en').slice(0, 2);
    var table = MESSAGES[lang] || MESSAGES.en;
    return function t(key, params) {
      var text = table[key] || MESSAGES.en[key] || key;
      if (!params) return text;
      return text.replace(/\{(\w+)\}/g, function (_, name) {
        return name in params ? String(params[name]) : '{' + name + '}';
      });
    };
  }

  // ---------------------------------------------------------------------------------------
  // Events

  function Emitter() {
    this.handlers = Object.create(null);
  }

  Emitter.prototype.on = function (type, handler) {
    (this.handlers[type] || (this.handlers[type] = [])).push(handler);
    var self = this;
    return function off() { self.off(type, handler); };
  };

  Emitter.prototype.once = function (type, handler) {
    var off = this.on(type, function () {
      off();
      handler.apply(this, arguments);
    });
    return off;
  };

  Emitter.prototype.off = function (type, handler) {
    var list = this.handlers[type];
    if (!list) return;
    var at = list.indexOf(handler);
    if (at >= 0) list.splice(at, 1);
  };

  Emitter.prototype.emit = function (type) {
    var args = Array.prototype.slice.call(arguments, 1);
    (this.handlers[type] || []).slice().forEach(function (handler) {
      try {
        handler.apply(null, args);
      } catch (e) {
        console.error('handler for ' + type + ' failed', e);
      }
    });
  };

  // ---------------------------------------------------------------------------------------
  // State

  var initialState = {
    items: [],
    total: 0,
    page: 1,
    loading: false,
    error: null,
    filters: { search: '', tag: '', stockOnly: false },
    sort: { key: 'id', direction: 'asc' },
    selection: {},
    online: true,
    transfer: { wire: 0, decoded: 0, requests: 0 },
  };

  function reducer(state, action) {
    switch (action.type) {
      case 'load/start':
        return Object.assign({}, state, { loading: true, error: null });
      case 'load/done':
        return Object.assign({}, state, {
          loading: false,
          items: action.items,
          total: action.total,
        });
      case 'load/failed':
        return Object.assign({}, state, { loading: false, error: action.error });
      case 'page/set':
        return Object.assign({}, state, { page: action.page });
      case 'filters/set':
        return Object.assign({}, state, {
          page: 1,
          filters: Object.assign({}, state.filters, action.filters),
        });
      case 'sort/toggle': {
        var same = state.sort.key === action.key;
        var direction = same && state.sort.direction === 'asc' ? 'desc' : 'asc';
        return Object.assign({}, state, { sort: { key: action.key, direction: direction } });
      }
      case 'selection/toggle': {
        var selection = Object.assign({}, state.selection);
        if (selection[action.id]) delete selection[action.id];
        else selection[action.id] = true;
        return Object.assign({}, state, { selection: selection });
      }
      case 'selection/clear':
        return Object.assign({}, state, { selection: {} });
      case 'network/online':
        return Object.assign({}, state, { online: action.online });
      case 'transfer/add':
        return Object.assign({}, state, {
          transfer: {
            wire: state.transfer.wire + action.wire,
            decoded: state.transfer.decoded + action.decoded,
            requests: state.transfer.requests + 1,
          },
        });
      default:
        return state;
    }
  }

  function createStore(reduce, state) {
    var events = new Emitter();
    var history = [];
    return {
      getState: function () { return state; },
      dispatch: function (action) {
        var previous = state;
        state = reduce(state, action);
        if (state !== previous) {
          history.push(action.type);
          if (history.length > 50) history.shift();
          events.emit('change', state, previous, action);
        }
        return action;
      },
      subscribe: function (handler) { return events.on('change', handler); },
      history: function () { return history.slice(); },
    };
  }

  function select(state) {
    var f = state.filters;
    var needle = f.search.trim().toLowerCase();
    var visible = state.items.filter(function (item) {
      if (f.stockOnly && !item.in_stock) return false;
      if (f.tag && item.tags.indexOf(f.tag) < 0) return false;
      if (!needle) return true;
      return item.name.toLowerCase().indexOf(needle) >= 0 ||
        item.sku.toLowerCase().indexOf(needle) >= 0;
    });
    return sortBy(visible, state.sort.key, state.sort.direction);
  }

  // ---------------------------------------------------------------------------------------
  // Preferences

  var prefs = {
    load: function () {
      try {
        var raw = global.localStorage && global.localStorage.getItem(STORAGE_KEY);
        return raw ? JSON.parse(raw) : {};
      } catch (e) {
        return {};
      }
    },
    save: function (value) {
      try {
        global.localStorage.setItem(STORAGE_KEY, JSON.stringify(value));
      } catch (e) {
        // Private mode or a full quota: preferences are a convenience only.
      }
    },
  };

  // ---------------------------------------------------------------------------------------
  // HTTP

  function HttpError(status, message, body) {
    this.name = 'HttpError';
    this.status = status;
    this.message = message;
    this.body = body;
  }
  HttpError.prototype = Object.create(Error.prototype);

  function sleep(ms) {
    return new Promise(function (resolve) { setTimeout(resolve, ms); });
  }

  function backoff(attempt) {
    var base = RETRY_BASE_MS * Math.pow(2, attempt);
    return base / 2 + Math.random() * base / 2;
  }

  function queryString(params) {
    return Object.keys(params)
      .filter(function (k) { return params[k] !== undefined && params[k] !== ''; })
      .map(function (k) { return encodeURIComponent(k) + '=' + encodeURIComponent(params[k]); })
      .join('&');
  }

  function createClient(options) {
    var base = options.base || API_BASE;
    var onTransfer = options.onTransfer || noop;
    var inflight = new Map();

    function measure(url) {
      if (!global.performance || !performance.getEntriesByName) return;
      var entries = performance.getEntriesByName(new URL(url, location.href).href);
      var e = entries[entries.length - 1];
      if (e && e.encodedBodySize) onTransfer(e.encodedBodySize, e.decodedBodySize);
    }

    async function request(method, path, params, body) {
      var url = base + path + (params ? '?' + queryString(params) : '');
      var key = method === 'GET' ? url : null;
      if (key && inflight.has(key)) return inflight.get(key);
      var attempt = 0;
      var run = (async function () {
        for (;;) {
          var res;
          try {
            res = await fetch(url, {
              method: method,
              headers: body ? { 'content-type': 'application/json' } : undefined,
              body: body ? JSON.stringify(body) : undefined,
              credentials: 'same-origin',
            });
          } catch (e) {
            if (attempt++ >= MAX_RETRIES) throw new HttpError(0, 'network error', null);
            await sleep(backoff(attempt));
            continue;
          }
          if (res.status >= 500 && attempt++ < MAX_RETRIES) {
            await sleep(backoff(attempt));
            continue;
          }
          var text = await res.text();
          measure(url);
          if (!res.ok) throw new HttpError(res.status, res.statusText, text);
          var type = res.headers.get('content-type') || '';
          return type.indexOf('json') >= 0 ? JSON.parse(text) : text;
        }
      })();
      if (key) {
        inflight.set(key, run);
        run.then(function () { inflight.delete(key); }, function () { inflight.delete(key); });
      }
      return run;
    }

    return {
      items: function (page, size) {
        return request('GET', '/items', { n: size, start: (page - 1) * size });
      },
      echo: function (payload) {
        return request('POST', '/echo', null, payload);
      },
    };
  }

  // ---------------------------------------------------------------------------------------
  // DOM helpers

  function h(tag, attrs) {
    var el = document.createElement(tag);
    var children = Array.prototype.slice.call(arguments, 2);
    if (attrs) {
      Object.keys(attrs).forEach(function (name) {
        var value = attrs[name];
        if (value === false || value == null) return;
        if (name === 'class') el.className = value;
        else if (name === 'style' && isObject(value)) Object.assign(el.style, value);
        else if (name.slice(0, 2) === 'on') el.addEventListener(name.slice(2), value);
        else if (name === 'dataset') Object.assign(el.dataset, value);
        else el.setAttribute(name, value === true ? '' : value);
      });
    }
    children.forEach(function append(child) {
      if (child == null || child === false) return;
      if (Array.isArray(child)) return child.forEach(append);
      el.appendChild(typeof child === 'string' || typeof child === 'number'
        ? document.createTextNode(String(child)) : child);
    });
    return el;
  }

  function replaceChildren(parent, children) {
    while (parent.firstChild) parent.removeChild(parent.firstChild);
    [].concat(children).forEach(function (c) { if (c) parent.appendChild(c); });
  }

  function delegate(root, type, selector, handler) {
    root.addEventListener(type, function (event) {
      var target = event.target.closest(selector);
      if (target && root.contains(target)) handler.call(target, event, target);
    });
  }

  // ---------------------------------------------------------------------------------------
  // Components

  function Toasts(root) {
    this.root = root;
  }

  Toasts.prototype.show = function (text, kind, ms) {
    var toast = h('div', { class: 'toast toast-' + (kind || 'info'), role: 'status' }, text);
    this.root.appendChild(toast);
    setTimeout(function () {
      toast.classList.add('toast-leaving');
      setTimeout(function () { toast.remove(); }, 300);
    }, ms || 2500);
  };

  function Modal(t) {
    this.t = t;
    this.el = null;
    this.onKey = this.onKey.bind(this);
  }

  Modal.prototype.open = function (title, body) {
    this.close();
    var self = this;
    this.el = h('div', { class: 'modal-backdrop', onclick: function (e) {
      if (e.target === self.el) self.close();
    } }, h('div', { class: 'modal', role: 'dialog', 'aria-modal': 'true', 'aria-label': title },
      h('header', null, h('h2', null, title),
        h('button', { class: 'modal-close', onclick: function () { self.close(); } },
          self.t('modal.close'))),
      h('div', { class: 'modal-body' }, body)));
    document.body.appendChild(this.el);
    document.addEventListener('keydown', this.onKey);
  };

  Modal.prototype.onKey = function (event) {
    if (event.key === 'Escape') this.close();
  };

  Modal.prototype.close = function () {
    if (!this.el) return;
    document.removeEventListener('keydown', this.onKey);
    this.el.remove();
    this.el = null;
  };

  function renderTags(tags) {
    return tags.map(function (tag) { return h('span', { class: 'tag tag-' + tag }, tag); });
  }

  function renderRow(item, selected, t) {
    return h('tr', { class: selected ? 'selected' : null, dataset: { id: String(item.id) } },
      h('td', null, h('input', { type: 'checkbox', checked: selected, 'aria-label': item.name })),
      h('td', { class: 'num' }, formatCount(item.id)),
      h('td', null, item.name),
      h('td', { class: 'mono' }, item.sku),
      h('td', { class: 'num' }, formatPrice(item.price)),
      h('td', null, item.in_stock
        ? h('span', { class: 'ok' }, t('items.in_stock'))
        : h('span', { class: 'warn' }, t('items.out_of_stock'))),
      h('td', null, renderTags(item.tags)));
  }

  function renderTable(state, rows, t) {
    var columns = [
      ['id', '#'], ['name', t('items.name')], ['sku', t('items.sku')],
      ['price', t('items.price')], ['in_stock', t('items.in_stock')], ['tags', t('items.tags')],
    ];
    var head = h('tr', null, h('th', null, ''), columns.map(function (c) {
      var sorted = state.sort.key === c[0];
      var arrow = sorted ? (state.sort.direction === 'asc' ? ' ▲' : ' ▼') : '';
      return h('th', { dataset: { sort: c[0] }, 'aria-sort': sorted ? state.sort.direction + 'ending' : null },
        c[1] + arrow);
    }));
    if (!rows.length) {
      return h('table', { class: 'items' }, h('thead', null, head),
        h('tbody', null, h('tr', null, h('td', { colspan: 7, class: 'empty' }, t('items.empty')))));
    }
    return h('table', { class: 'items' }, h('thead', null, head),
      h('tbody', null, rows.map(function (item) {
        return renderRow(item, !!state.selection[item.id], t);
      })));
  }

  function renderPager(state, t) {
    var pages = Math.max(1, Math.ceil(state.total / PAGE_SIZE));
    return h('nav', { class: 'pager' },
      h('button', { disabled: state.page <= 1, dataset: { page: String(state.page - 1) } },
        t('pager.previous')),
      h('span', null, t('pager.page', { page: state.page, pages: pages })),
      h('button', { disabled: state.page >= pages, dataset: { page: String(state.page + 1) } },
        t('pager.next')));
  }

  function renderFilters(state, tags, t) {
    return h('form', { class: 'filters', onsubmit: function (e) { e.preventDefault(); } },
      h('input', { type: 'search', name: 'search', value: state.filters.search,
        placeholder: t('filter.search') }),
      h('select', { name: 'tag', 'aria-label': t('filter.tag') },
        h('option', { value: '' }, t('filter.all_tags')),
        tags.map(function (tag) {
          return h('option', { value: tag, selected: tag === state.filters.tag }, tag);
        })),
      h('label', null, h('input', { type: 'checkbox', name: 'stockOnly',
        checked: state.filters.stockOnly }), ' ', t('filter.stock_only')));
  }

  function renderTransfer(state, t) {
    var x = state.transfer;
    return h('p', { class: 'transfer muted' },
      t('stats.wire') + ': ' + formatBytes(x.wire) + ' · ' +
      t('stats.decoded') + ': ' + formatBytes(x.decoded) + ' · ' +
      formatRatio(x.wire, x.decoded) + ' · ' + x.requests + ' requests');
  }

  // A sparkline of prices on a canvas, scaled for the device pixel ratio.
  function sparkline(values, width, height) {
    var canvas = h('canvas', { class: 'sparkline', width: width, height: height });
    var ratio = global.devicePixelRatio || 1;
    canvas.width = width * ratio;
    canvas.height = height * ratio;
    canvas.style.width = width + 'px';
    canvas.style.height = height + 'px';
    var ctx = canvas.getContext && canvas.getContext('2d');
    if (!ctx || values.length < 2) return canvas;
    ctx.scale(ratio, ratio);
    var min = Math.min.apply(null, values), max = Math.max.apply(null, values);
    var span = max - min || 1;
    ctx.strokeStyle = '#2f6fed';
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    values.forEach(function (v, i) {
      var x = (i / (values.length - 1)) * (width - 2) + 1;
      var y = height - 1 - ((v - min) / span) * (height - 2);
      if (i === 0) ctx.moveTo(x, y);
      else ctx.lineTo(x, y);
    });
    ctx.stroke();
    return canvas;
  }

  function summary(rows, t) {
    var byTag = groupBy(rows, function (item) { return item.tags[0]; });
    var tags = Object.keys(byTag).sort();
    return h('dl', { class: 'summary' }, tags.map(function (tag) {
      var list = byTag[tag];
      var total = list.reduce(function (s, item) { return s + item.price; }, 0);
      return [h('dt', null, tag), h('dd', null,
        t('items.count', { count: list.length }) + ' · ' + formatPrice(total / list.length))];
    }));
  }

  // ---------------------------------------------------------------------------------------
  // Validation (the echo form)

  var RULES = {
    required: function (v) { return v !== '' && v != null ? null : 'is required'; },
    sku: function (v) { return /^SKU-[0-9A-F]{8}$/.test(v) ? null : 'is not a SKU'; },
    price: function (v) {
      var n = Number(v);
      return isFinite(n) && n >= 0 && n < 1e6 ? null : 'is not a price';
    },
    maxLength: function (max) {
      return function (v) { return String(v).length <= max ? null : 'is too long'; };
    },
  };

  function validate(values, schema) {
    var errors = {};
    Object.keys(schema).forEach(function (field) {
      for (var i = 0; i < schema[field].length; i++) {
        var message = schema[field][i](values[field]);
        if (message) {
          errors[field] = field + ' ' + message;
          break;
        }
      }
    });
    return Object.keys(errors).length ? errors : null;
  }

  var ITEM_SCHEMA = {
    name: [RULES.required, RULES.maxLength(80)],
    sku: [RULES.required, RULES.sku],
    price: [RULES.required, RULES.price],
  };

  // ---------------------------------------------------------------------------------------
  // Routing

  function createRouter(routes, onChange) {
    function current() {
      var hash = location.hash.replace(/^#\/?/, '');
      var parts = hash.split('?');
      var path = '/' + parts[0];
      var query = {};
      (parts[1] || '').split('&').filter(Boolean).forEach(function (pair) {
        var kv = pair.split('=');
        query[decodeURIComponent(kv[0])] = decodeURIComponent(kv[1] || '');
      });
      for (var i = 0; i < routes.length; i++) {
        var match = routes[i].pattern.exec(path);
        if (match) return { name: routes[i].name, params: match.slice(1), query: query };
      }
      return { name: 'not-found', params: [], query: query };
    }
    global.addEventListener('hashchange', function () { onChange(current()); });
    return {
      current: current,
      go: function (path) { location.hash = '#' + path; },
    };
  }

  var ROUTES = [
    { name: 'list', pattern: /^\/$/ },
    { name: 'list', pattern: /^\/items$/ },
    { name: 'item', pattern: /^\/items\/(\d+)$/ },
    { name: 'summary', pattern: /^\/summary$/ },
  ];

  // ---------------------------------------------------------------------------------------
  // The application

  function App(root, options) {
    options = options || {};
    this.root = root;
    this.t = createTranslator(options.locale || navigator.language);
    this.store = createStore(reducer, Object.assign({}, initialState, {
      filters: Object.assign({}, initialState.filters, pick(prefs.load(), ['tag', 'stockOnly'])),
    }));
    var store = this.store;
    this.client = createClient({
      base: options.base,
      onTransfer: function (wire, decoded) {
        store.dispatch({ type: 'transfer/add', wire: wire, decoded: decoded });
      },
    });
    this.toasts = new Toasts(h('div', { class: 'toasts', 'aria-live': 'polite' }));
    this.modal = new Modal(this.t);
    this.router = createRouter(ROUTES, this.route.bind(this));
    this.render = throttle(this.render.bind(this), 50);
  }

  App.prototype.start = function () {
    var self = this;
    this.root.appendChild(this.toasts.root);
    this.store.subscribe(function (state, previous) {
      if (!deepEqual(state.filters, previous.filters)) {
        prefs.save(pick(state.filters, ['tag', 'stockOnly']));
      }
      self.render();
    });
    this.bind();
    global.addEventListener('online', function () {
      self.store.dispatch({ type: 'network/online', online: true });
      self.load();
    });
    global.addEventListener('offline', function () {
      self.store.dispatch({ type: 'network/online', online: false });
    });
    this.route(this.router.current());
    return this;
  };

  App.prototype.bind = function () {
    var self = this, store = this.store;
    var search = debounce(function (value) {
      store.dispatch({ type: 'filters/set', filters: { search: value } });
    }, 150);
    this.root.addEventListener('input', function (event) {
      var el = event.target;
      if (el.name === 'search') search(el.value);
      if (el.name === 'tag') store.dispatch({ type: 'filters/set', filters: { tag: el.value } });
      if (el.name === 'stockOnly') {
        store.dispatch({ type: 'filters/set', filters: { stockOnly: el.checked } });
      }
    });
    delegate(this.root, 'click', 'th[data-sort]', function (e, th) {
      store.dispatch({ type: 'sort/toggle', key: th.dataset.sort });
    });
    delegate(this.root, 'click', 'nav.pager button', function (e, button) {
      var page = Number(button.dataset.page);
      store.dispatch({ type: 'page/set', page: page });
      self.load();
    });
    delegate(this.root, 'change', 'tr[data-id] input[type=checkbox]', function (e, input) {
      store.dispatch({ type: 'selection/toggle', id: input.closest('tr').dataset.id });
    });
    delegate(this.root, 'dblclick', 'tr[data-id]', function (e, row) {
      self.router.go('/items/' + row.dataset.id);
    });
    delegate(this.root, 'click', '[data-copy]', function (e, el) {
      if (!navigator.clipboard) return;
      navigator.clipboard.writeText(el.dataset.copy).then(function () {
        self.toasts.show(self.t('toast.copied'));
      }, noop);
    });
  };

  App.prototype.route = function (route) {
    this.view = route;
    if (route.name === 'list' || route.name === 'summary') {
      var page = Number(route.query.page) || 1;
      this.store.dispatch({ type: 'page/set', page: clamp(page, 1, 1e6) });
      this.load();
    } else if (route.name === 'item') {
      this.showItem(Number(route.params[0]));
    }
    this.render();
  };

  App.prototype.load = async function () {
    var store = this.store, state = store.getState();
    store.dispatch({ type: 'load/start' });
    try {
      var items = await this.client.items(state.page, PAGE_SIZE);
      store.dispatch({ type: 'load/done', items: items, total: 100000 });
    } catch (e) {
      store.dispatch({ type: 'load/failed', error: e });
    }
  };

  App.prototype.showItem = async function (id) {
    var t = this.t;
    try {
      var list = await this.client.items(Math.floor(id / PAGE_SIZE) + 1, PAGE_SIZE);
      var item = list.filter(function (x) { return x.id === id; })[0];
      if (!item) throw new HttpError(404, 'not found', null);
      this.modal.open(item.name, h('div', null,
        h('p', null, item.description),
        h('p', { class: 'mono', dataset: { copy: item.sku } }, item.sku),
        h('p', null, formatPrice(item.price)),
        h('p', null, renderTags(item.tags))));
    } catch (e) {
      this.toasts.show(t('error.network', { status: e.status || 0 }), 'error', 4000);
    }
  };

  App.prototype.render = function () {
    var state = this.store.getState(), t = this.t;
    var rows = select(state);
    var tags = Object.keys(groupBy(state.items, function (item) { return item.tags[0]; })).sort();
    var body;
    if (state.error) {
      var self = this;
      body = h('div', { class: 'error' },
        t('error.network', { status: state.error.status || 0 }), ' ',
        h('button', { onclick: function () { self.load(); } }, t('error.retry')));
    } else if (state.loading && !state.items.length) {
      body = h('p', { class: 'muted' }, t('app.loading'));
    } else if (this.view && this.view.name === 'summary') {
      body = [summary(rows, t), sparkline(rows.map(function (x) { return x.price; }), 240, 40)];
    } else {
      body = [renderTable(state, rows, t), renderPager(state, t)];
    }
    replaceChildren(this.root, [
      this.toasts.root,
      h('header', { class: 'app-header' }, h('h1', null, t('app.title')),
        h('span', { class: 'version' }, 'v' + APP_VERSION)),
      state.online ? null : h('p', { class: 'offline' }, t('app.offline')),
      renderFilters(state, tags, t),
      h('main', null, body),
      renderTransfer(state, t),
    ]);
  };

  // ---------------------------------------------------------------------------------------
  // Exports

  global.InventoryConsole = {
    version: APP_VERSION,
    App: App,
    createStore: createStore,
    reducer: reducer,
    select: select,
    validate: validate,
    schema: ITEM_SCHEMA,
    format: {
      bytes: formatBytes,
      duration: formatDuration,
      relative: formatRelative,
      price: formatPrice,
      count: formatCount,
      ratio: formatRatio,
    },
    util: {
      debounce: debounce,
      throttle: throttle,
      escapeHtml: escapeHtml,
      deepEqual: deepEqual,
      groupBy: groupBy,
      sortBy: sortBy,
      uid: uid,
    },
    start: function (selector, options) {
      var root = typeof selector === 'string' ? document.querySelector(selector) : selector;
      if (!root) throw new Error('InventoryConsole.start: no element ' + selector);
      return new App(root, options).start();
    },
  };
})(typeof window !== 'undefined' ? window : globalThis);

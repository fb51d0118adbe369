/* foretab page: ask a question through POST /api/ask and show the answer, the chart and
 * the trace. Everything comes from the JSON answer object (the same as `foretab ask --json`). */
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const number = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  let lastDoc = null;
  let storeLoaded = false;
  // The conversation the next question continues (docs/conversations.md); null: a new one.
  let conversationId = null;

  function token() {
    return $("token").value.trim() || sessionStorage.getItem("foretab-token") || "";
  }

  async function api(path, body) {
    const headers = { Accept: "application/json" };
    const t = token();
    if (t) headers.Authorization = "Bearer " + t;
    const init = { headers };
    if (body !== undefined) {
      init.method = "POST";
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (err) {
      throw { type: "NetworkError", message: "The server did not answer (" + err.message + "). Is `foretab serve` still running?", suggestions: [] };
    }
    let data = null;
    try { data = await response.json(); } catch (err) { data = null; }
    if (!response.ok) {
      if (response.status === 401) { $("token-row").hidden = false; $("token").focus(); }
      throw (data && data.error) || { type: "HTTP " + response.status, message: response.statusText || "request failed", suggestions: [] };
    }
    if (t) sessionStorage.setItem("foretab-token", t);
    return data;
  }

  function showError(error) {
    $("result").hidden = true;
    $("error").hidden = false;
    $("error-title").textContent = friendly(error.type);
    $("error-message").textContent = error.message;
    const list = $("error-suggestions");
    list.textContent = "";
    for (const s of error.suggestions || []) {
      const li = document.createElement("li");
      li.textContent = s;
      list.appendChild(li);
    }
  }

  function friendly(type) {
    const names = {
      UnknownEntityError: "Unknown name", AmbiguousEntityError: "Ambiguous name",
      QuestionError: "Question not understood", ForecastError: "No forecast",
      GuardError: "Query refused", BadRequestError: "Invalid request",
      UnauthorizedError: "Access token needed", RequestTooLargeError: "Request too large",
      ConversationNotFoundError: "Conversation ended", ConversationFullError: "Conversation full",
    };
    return (names[type] || "Could not answer") + " (" + type + ")";
  }

  function cell(value, tag) {
    const td = document.createElement(tag || "td");
    if (typeof value === "number") {
      td.textContent = number.format(value);
      td.className = "num";
    } else {
      td.textContent = String(value);
    }
    return td;
  }

  function renderAnswer(doc) {
    $("answer-text").textContent = doc.text;
    const body = $("answer-table").tBodies[0];
    body.textContent = "";
    for (const item of doc.answer) {
      const tr = document.createElement("tr");
      for (const value of item) tr.appendChild(cell(value));
      body.appendChild(tr);
    }
  }

  function renderChart(doc) {
    const drawn = window.ForetabPlot.draw($("chart"), doc);
    $("chart-figure").hidden = drawn.series === 0;
    const legend = $("legend");
    legend.textContent = "";
    const series = window.ForetabPlot.seriesOf(doc);
    for (const s of series) {
      const li = document.createElement("li");
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = s.color;
      li.append(swatch, s.name + " (" + s.place + ")");
      legend.appendChild(li);
    }
    const key = (cls, text) => {
      const li = document.createElement("li");
      const swatch = document.createElement("span");
      swatch.className = "swatch " + cls;
      swatch.style.background = "#5b6470";
      swatch.style.borderColor = "#5b6470";
      li.append(swatch, text);
      legend.appendChild(li);
    };
    key("line", "history");
    if (drawn.forecasts) key("dash", "forecast");
    if (drawn.bands) key("band", Math.round((doc.interval_level || 0.8) * 100) + "% interval");
    let note = "Shaded column: the months the question asks about.";
    if (!doc.forecast.length) note += " History only: the question is about the past.";
    else if (!drawn.bands) note += " No interval band: the future source '" + doc.future_source + "' gives no prediction interval.";
    else note += " Forecast from " + doc.future_source + ".";
    $("chart-note").textContent = note;
  }

  function renderTrace(doc) {
    const plan = $("plan");
    plan.textContent = "";
    const row = (name, value) => {
      const dt = document.createElement("dt");
      dt.textContent = name;
      const dd = document.createElement("dd");
      dd.textContent = value;
      plan.append(dt, dd);
    };
    const p = doc.plan;
    row("task", p.task + " (" + p.aggregate + ", " + p.comparison + ", " + p.measure + ")");
    row("projects", p.projects.map((e) => e.project + " (" + e.district + ", " + e.city + ")").join("; ") || "—");
    row("window", p.window.first + " – " + p.window.last + " «" + p.window.expression + "»");
    row("now", p.reference_month);
    row("future", doc.future_source + (doc.interval_level ? ", " + Math.round(doc.interval_level * 100) + "% interval" : ""));
    const tables = $("tables");
    tables.textContent = "";
    for (const r of doc.retrieval) {
      const li = document.createElement("li");
      li.textContent = (r.table || "(missing) " + r.caption) + " — " + r.method;
      tables.appendChild(li);
    }
    $("sql").textContent = doc.sql || "(no SQL ran)";
    $("params").textContent = JSON.stringify(doc.params);
    const body = $("steps").tBodies[0];
    body.textContent = "";
    for (const s of doc.steps) {
      let detail = "";
      if (s.stage === "retrieve") detail = s.matches.length + " caption(s)";
      if (s.stage === "read") detail = s.rows + " row(s)" + (s.truncated ? ", truncated" : "");
      if (s.stage === "forecast") detail = s.months.length + " month(s)";
      const tr = document.createElement("tr");
      tr.append(cell(s.stage), cell(s.implementation), cell(detail), cell(s.ms));
      body.appendChild(tr);
    }
    if (doc.timings.total !== undefined) {
      const tr = document.createElement("tr");
      tr.append(cell("total", "th"), cell(""), cell(""), cell(doc.timings.total));
      body.appendChild(tr);
    }
  }

  function addTurn(said, shown) {
    const li = document.createElement("li");
    const q = document.createElement("q");
    q.textContent = said;
    li.appendChild(q);
    const span = document.createElement("span");
    span.className = "muted";
    span.textContent = " → " + shown;
    li.appendChild(span);
    $("turns").appendChild(li);
    $("thread").hidden = false;
  }

  function newConversation() {
    conversationId = null;
    $("turns").textContent = "";
    $("thread").hidden = true;
    $("clarify").hidden = true;
  }

  function renderClarify(doc) {
    $("result").hidden = true;
    $("clarify").hidden = false;
    $("clarify-message").textContent = doc.clarify.message;
    const list = $("clarify-choices");
    list.textContent = "";
    for (const choice of doc.clarify.choices) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "choice";
      b.textContent = choice;
      b.addEventListener("click", () => { $("question").value = choice; ask(choice); });
      li.appendChild(b);
      list.appendChild(li);
    }
  }

  async function ask(question) {
    const button = $("ask");
    button.disabled = true;
    $("status").textContent = "Answering…";
    $("error").hidden = true;
    try {
      const body = { question };
      if ($("future").value) body.future = $("future").value;
      if ($("engine").value && $("engine").value !== "rules") body.engine = $("engine").value;
      if (conversationId) body.conversation_id = conversationId;
      let doc;
      try {
        doc = await api("/api/ask", body);
      } catch (error) {
        if (!conversationId || !/^Conversation(NotFound|Full)Error$/.test(error.type)) throw error;
        // expired or full: the question is asked again, in a new conversation
        newConversation();
        delete body.conversation_id;
        doc = await api("/api/ask", body);
      }
      conversationId = doc.conversation_id || null;
      $("clarify").hidden = true;
      if (doc.clarify) {
        addTurn(question, doc.clarify.message);
        renderClarify(doc);
        $("status").textContent = "Choose one to go on.";
        return;
      }
      addTurn(question, doc.asked || doc.canonical || doc.text);
      lastDoc = doc;
      $("result").hidden = false;
      renderAnswer(doc);
      renderChart(doc);
      renderTrace(doc);
      $("status").textContent = "Answered in " + Math.round(doc.timings.total || 0) + " ms.";
      if (!storeLoaded) loadStore();  // the first call may have needed the token
      $("answer-title").scrollIntoView({ block: "nearest" });
      const url = new URL(window.location.href);
      url.searchParams.set("q", question);
      window.history.replaceState(null, "", url);
    } catch (error) {
      showError(error);
      $("status").textContent = "";
    } finally {
      button.disabled = false;
    }
  }

  async function start() {
    $("ask-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const question = $("question").value.trim();
      if (question) ask(question);
    });
    $("question").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        $("ask-form").requestSubmit();
      }
    });
    $("new-conversation").addEventListener("click", () => {
      newConversation();
      $("status").textContent = "New conversation.";
      $("question").focus();
    });
    let resize = null;
    window.addEventListener("resize", () => {
      clearTimeout(resize);
      resize = setTimeout(() => { if (lastDoc) renderChart(lastDoc); }, 150);
    });
    await loadStore();
    const q = new URL(window.location.href).searchParams.get("q");
    if (q) { $("question").value = q; ask(q); }
  }

  async function loadStore() {
    try {
      const health = await api("/api/health");
      $("store").textContent = health.store + " · " + health.projects + " projects · now = " + health.reference_month + " · future: " + health.future;
      if (health.engines.length > 1) {
        for (const name of health.engines) {
          const option = document.createElement("option");
          option.value = name;
          option.textContent = name === "rules" ? "rules (no LLM)" : name + " (LLM)";
          $("engine").appendChild(option);
        }
        $("engine-field").hidden = false;
      }
      const examples = await api("/api/examples");
      const list = $("examples");
      for (const q of examples) {
        const li = document.createElement("li");
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = q;
        b.addEventListener("click", () => { $("question").value = q; ask(q); });
        li.appendChild(b);
        list.appendChild(li);
      }
      storeLoaded = true;
    } catch (error) {
      $("store").textContent = "";
      showError(error);
    }
  }

  start();
})();

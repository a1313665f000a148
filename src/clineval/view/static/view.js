// clineval view: progressive enhancement only (every page works without it).
document.addEventListener("DOMContentLoaded", function () {
  function picked() {
    return Array.prototype.map.call(document.querySelectorAll('input[name="pick"]:checked'), function (el) { return el.value; });
  }
  var compare = document.getElementById("compare-selected");
  if (compare) compare.addEventListener("click", function () {
    var ids = picked();
    if (ids.length !== 2) { alert("Select exactly two runs."); return; }
    window.location = compare.dataset.compareUrl + "?a=" + encodeURIComponent(ids[0]) + "&b=" + encodeURIComponent(ids[1]);
  });
  var board = document.getElementById("leaderboard-selected");
  if (board) board.addEventListener("click", function () {
    var ids = picked();
    window.location = board.dataset.boardUrl + (ids.length ? "?runs=" + encodeURIComponent(ids.join(",")) : "");
  });
});

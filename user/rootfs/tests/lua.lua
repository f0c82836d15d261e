-- unix_lua: Debian's lua5.4 on Stet. String operations, tables, closures
-- and a coroutine, each printed as an exact value; the last line is
-- "lua: all ok" only when every check passed. Run as
--   lua5.4 /tests/lua.lua
local failed = 0
local function check(what, got, want)
  if got == want then
    print("lua: " .. what .. ": ok")
  else
    failed = failed + 1
    print(string.format("lua: %s: WRONG (got %s, want %s)", what, tostring(got), tostring(want)))
  end
end

-- Strings.
local s = "Stet runs Lua"
check("upper", s:upper(), "STET RUNS LUA")
check("gsub", (s:gsub("%a+", function(w) return w:reverse() end)), "tetS snur auL")
check("format", string.format("%5.2f|%-4d|%x|%q", math.pi, 42, 255, 'say "hi"'), ' 3.14|42  |ff|"say \\"hi\\""')
check("find", select(2, s:find("runs")), 9)
check("rep", ("ab"):rep(3, "-"), "ab-ab-ab")
local words = {}
for w in ("one two three four"):gmatch("%a+") do words[#words + 1] = w end
check("gmatch", table.concat(words, ","), "one,two,three,four")
check("byte/char", string.char(s:byte(1, 4)), "Stet")

-- Tables.
local t = {}
for i = 1, 1000 do t[i] = i * i end
local sum = 0
for _, v in ipairs(t) do sum = sum + v end
check("sum of squares", sum, 333833500)
table.sort(words)
check("sort", table.concat(words, " "), "four one three two")
local m = {}
for i = 1, 100 do m["k" .. i] = i end
local n, msum = 0, 0
for _, v in pairs(m) do n = n + 1; msum = msum + v end
check("hash table", n .. " " .. msum, "100 5050")
check("unpack", select("#", table.unpack({1, 2, nil, 4}, 1, 4)), 4)

-- Closures: counters with their own upvalues.
local function counter(step)
  local c = 0
  return function() c = c + step; return c end
end
local a, b = counter(1), counter(10)
a(); a(); b()
check("closures", a() .. " " .. b(), "3 20")

-- A coroutine: a generator of Fibonacci numbers, resumed with values.
local fib = coroutine.wrap(function()
  local x, y = 0, 1
  while true do coroutine.yield(x); x, y = y, x + y end
end)
local fibs = {}
for _ = 1, 15 do fibs[#fibs + 1] = fib() end
check("coroutine", table.concat(fibs, " "), "0 1 1 2 3 5 8 13 21 34 55 89 144 233 377")
local co = coroutine.create(function(x)
  local y = coroutine.yield(x * 2)
  return x + y
end)
local ok1, v1 = coroutine.resume(co, 20)
local ok2, v2 = coroutine.resume(co, 22)
check("resume", tostring(ok1) .. v1 .. tostring(ok2) .. v2 .. coroutine.status(co), "true40true42dead")

-- Integers and errors.
check("integer", math.maxinteger // 3, 3074457345618258602)
check("pcall", select(2, pcall(error, {code = 7})).code, 7)

if failed == 0 then
  print("lua: all ok: " .. sum .. " " .. fibs[15])
else
  print("lua: FAILED " .. failed)
end

# cmake -DINPUT=FILE -DOUTPUT=FILE -DNAME=IDENTIFIER -P EmbedText.cmake
# Writes OUTPUT, a C++ file defining `static const char NAME[]` with the
# text of INPUT (the runtime's PTX), in raw-string pieces that stay under
# compilers' limits on one literal.
file(READ "${INPUT}" text)
string(LENGTH "${text}" length)
set(body "")
set(piece 8000)
set(at 0)
while(at LESS length)
  string(SUBSTRING "${text}" ${at} ${piece} chunk)
  string(APPEND body "R\"ptx(${chunk})ptx\"\n")
  math(EXPR at "${at} + ${piece}")
endwhile()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/EmbedText.cmake.\n"
  "static const char ${NAME}[] =\n${body};\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")

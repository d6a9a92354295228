# Writes OUT: IN with the text FIND replaced by REPLACE (a planted mistake for
# a test of the CUDA emulation). Fails when IN no longer holds FIND, so a
# solution edit that moves the line is noticed instead of planting nothing.
#   cmake -DIN=... -DOUT=... -DFIND=... -DREPLACE=... -P plant.cmake
file(READ "${IN}" text)
string(FIND "${text}" "${FIND}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "plant.cmake: ${IN} does not contain: ${FIND}")
endif()
string(REPLACE "${FIND}" "${REPLACE}" text "${text}")
file(WRITE "${OUT}" "${text}")

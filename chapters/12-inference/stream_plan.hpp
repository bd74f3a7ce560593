// (being written: chapter 12)
#pragma once
